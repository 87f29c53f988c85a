/*
 * The MPI a solver uses beside point-to-point messages and collectives:
 * one-sided halo updates (MPI_Put into the right neighbour's window
 * between two MPI_Win_fence), matched probes (a ring exchange received
 * with MPI_Mprobe + MPI_Mrecv on even iterations, MPI_Improbe +
 * MPI_Imrecv on odd ones, the way a receiver sizes a message before
 * taking it), an MPI_Alltoallw with a datatype per peer, and a collective
 * checkpoint with MPI-IO (MPI_File_write_at_all every 10 iterations, every
 * other time as the split collective MPI_File_write_at_all_begin/_end).
 * Rank 0 computes LATE_US microseconds more each iteration, so the others
 * wait for it in MPI_Win_fence. After the loop each rank writes a line
 * through the shared file pointer (MPI_File_iwrite_shared) and adds its
 * rank into rank 0's window (MPI_Raccumulate in a fence epoch).
 *
 * usage: io_rma ITERS LATE_US FILE; rank 0 prints
 *   iterations=I messages=M collectives=C sum=S
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "spin.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int iters = argc > 1 ? atoi(argv[1]) : 20;
	long late = argc > 2 ? atol(argv[2]) : 0;
	const char *path = argc > 3 ? argv[3] : "io_rma.out";
	int size, rank;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int right = (rank + 1) % size, left = (rank + size - 1) % size;

	double *halo;
	MPI_Win win;
	MPI_Win_allocate(sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &halo, &win);
	*halo = 0;
	MPI_File fh;
	MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);

	int *counts = malloc(size * sizeof(int)), *displs = malloc(size * sizeof(int));
	MPI_Datatype *types = malloc(size * sizeof(MPI_Datatype));
	int *out = malloc(size * sizeof(int)), *in = malloc(size * sizeof(int));
	for (int i = 0; i < size; i++) {
		counts[i] = 1;
		displs[i] = i * (int)sizeof(int);
		types[i] = MPI_INT;
		out[i] = rank * size + i;
	}

	long messages = 0, collectives = 0;
	double sum = 0, value = rank;
	MPI_Win_fence(0, win);
	for (int it = 0; it < iters; it++) {
		spin_us(300 + (rank == 0 ? late : 0));
		value += 1;
		MPI_Put(&value, 1, MPI_DOUBLE, right, 0, 1, MPI_DOUBLE, win);
		MPI_Win_fence(0, win);
		sum += *halo;

		/* the ring: send right, receive from the left as probed */
		MPI_Request sreq, rreq;
		MPI_Isend(&value, 1, MPI_DOUBLE, right, it, MPI_COMM_WORLD, &sreq);
		MPI_Message msg;
		MPI_Status st;
		double got = 0;
		int n = 0;
		if (it % 2 == 0) {
			MPI_Mprobe(left, it, MPI_COMM_WORLD, &msg, &st);
			MPI_Get_count(&st, MPI_DOUBLE, &n);
			MPI_Mrecv(&got, n, MPI_DOUBLE, &msg, MPI_STATUS_IGNORE);
		} else {
			int flag = 0;
			while (!flag)
				MPI_Improbe(MPI_ANY_SOURCE, it, MPI_COMM_WORLD, &flag, &msg, &st);
			MPI_Get_count(&st, MPI_DOUBLE, &n);
			MPI_Imrecv(&got, n, MPI_DOUBLE, &msg, &rreq);
			MPI_Wait(&rreq, MPI_STATUS_IGNORE);
		}
		MPI_Wait(&sreq, MPI_STATUS_IGNORE);
		messages++;
		sum += got;

		MPI_Alltoallw(out, counts, displs, types, in, counts, displs, types, MPI_COMM_WORLD);
		collectives++;
		sum += in[left];

		if (it % 10 == 9) {
			double rec[2] = { value, sum };
			MPI_Offset at = ((MPI_Offset)(it / 10) * size + rank) * (MPI_Offset)sizeof rec;
			if (it % 20 == 9) {
				MPI_File_write_at_all(fh, at, rec, 2, MPI_DOUBLE, MPI_STATUS_IGNORE);
			} else {
				MPI_File_write_at_all_begin(fh, at, rec, 2, MPI_DOUBLE);
				MPI_File_write_at_all_end(fh, rec, MPI_STATUS_IGNORE);
			}
		}
	}
	MPI_Request req;
	double line = sum;
	MPI_File_iwrite_shared(fh, &line, 1, MPI_DOUBLE, &req);
	MPI_Wait(&req, MPI_STATUS_IGNORE);
	MPI_File_close(&fh);
	double mine = rank;
	MPI_Win_fence(0, win);
	MPI_Raccumulate(&mine, 1, MPI_DOUBLE, 0, 0, 1, MPI_DOUBLE, MPI_SUM, win, &req);
	MPI_Wait(&req, MPI_STATUS_IGNORE);
	MPI_Win_fence(0, win);
	MPI_Win_free(&win);

	long all[2] = { messages, collectives }, tot[2];
	double total = 0;
	MPI_Reduce(all, tot, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Reduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		MPI_File_delete(path, MPI_INFO_NULL);
		/* the collectives: each Alltoallw once per rank's call, and the two reductions */
		printf("iterations=%d messages=%ld collectives=%ld sum=%g\n", iters, tot[0], tot[1] / size + 2, total);
	}
	free(counts);
	free(displs);
	free(types);
	free(out);
	free(in);
	MPI_Finalize();
	return 0;
}
