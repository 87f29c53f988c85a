/* xthread_p2p.c: point-to-point requests completed on another OpenMP thread
 * (MPI_THREAD_MULTIPLE). 2 ranks x 2 threads. Each round, rank 0's thread 0
 * posts MPI_Irecv and its thread 1 waits for it; rank 1's thread 0 starts
 * MPI_Issend and its thread 1 waits for it.
 *   round 0: rank 0 posts at once and waits 40 ms later; rank 1 sends after
 *            10 ms: the receive was posted first (no Late Receiver), rank 1
 *            blocks until rank 0 enters MPI_Wait (the receiver's progress).
 *   round 1: rank 0 posts and waits at once; rank 1 sends after 40 ms: Late
 *            Sender in rank 0's MPI_Wait (~40 ms).
 *   round 2: rank 1 sends and waits at once; rank 0 posts after 20 ms and
 *            waits 20 ms later: Late Receiver in rank 1's MPI_Wait (~20 ms,
 *            until the post, not until rank 0's MPI_Wait).
 * Built with -DWAITER=0, the posting threads wait themselves: the same
 * timeline with all MPI calls on the master threads, which Scalasca's scout
 * reads.
 */
#include <mpi.h>
#ifndef WAITER
#define WAITER 1 /* the thread that waits; 0: the posting thread (scout's reference) */
#endif
#include <omp.h>
#include <stdio.h>

static void spin(double s) { double t = MPI_Wtime(); while (MPI_Wtime() - t < s) ; }

int main(int argc, char **argv) {
  int prov, rank, size, errs = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &prov);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (prov < MPI_THREAD_MULTIPLE || size != 2) {
    if (rank == 0) fprintf(stderr, "xthread_p2p: needs MPI_THREAD_MULTIPLE and 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int buf[1024];
  MPI_Request req;
#pragma omp parallel num_threads(2)
  {
    int t = omp_get_thread_num();
    for (int round = 0; round < 3; round++) {
#pragma omp master
      MPI_Barrier(MPI_COMM_WORLD);
#pragma omp barrier
      if (rank == 0) {
        if (t == 0) {
          spin(round == 2 ? 0.02 : 0);
          MPI_Irecv(buf, 1024, MPI_INT, 1, round, MPI_COMM_WORLD, &req);
        }
#pragma omp barrier
        if (t == WAITER) {
          spin(round == 1 ? 0 : round == 0 ? 0.04 : 0.02);
          MPI_Wait(&req, MPI_STATUS_IGNORE);
          for (int i = 0; i < 1024; i++) errs += buf[i] != i + round;
        }
      } else {
        if (t == 0) {
          for (int i = 0; i < 1024; i++) buf[i] = i + round;
          spin(round == 0 ? 0.01 : round == 1 ? 0.04 : 0);
          MPI_Issend(buf, 1024, MPI_INT, 0, round, MPI_COMM_WORLD, &req);
        }
#pragma omp barrier
        if (t == WAITER) MPI_Wait(&req, MPI_STATUS_IGNORE);
      }
#pragma omp barrier
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("xthread_p2p: errors %d\n", errs);
  MPI_Finalize();
  return errs != 0;
}
