package report

import "testing"

func TestShortCode(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"main", "main"},
		{"ComputeSPMV_ref(SparseMatrix_STRUCT const&)+0x55", "ComputeSPMV_ref(SparseMatrix_STRUCT const&)+0x55"},
		{"ComputeSPMV_ref(SparseMatrix_STRUCT const&, Vector_STRUCT&, Vector_STRUCT&)+0x55", "ComputeSPMV_ref(…)+0x55"},
		{"void miniFE::cg_solve<miniFE::CSRMatrix<double, int, int>, miniFE::Vector<double, int, int> >(miniFE::CSRMatrix<double, int, int>&, double*)+0x947",
			"void miniFE::cg_solve<…>(…)+0x947"},
		{"bench::OpenMPApp::insert_task(int, int, bench::Payload const&) at /src/tasks_cpp.cpp:12 (approximate)",
			"bench::OpenMPApp::insert_task(…) at /src/tasks_cpp.cpp:12 (approximate)"},
		{"(anonymous namespace)::Worker::run(std::vector<double, std::allocator<double> >&)+0x10",
			"(anonymous namespace)::Worker::run(…)+0x10"},
		{"std::vector<int, std::allocator<int> >::operator<(std::vector<int, std::allocator<int> > const&) const",
			"std::vector<…>::operator<(…) const"},
		{"Kokkos::Impl::ParallelFor<Functor, Kokkos::RangePolicy<Kokkos::OpenMP> >::execute() const [clone ._omp_fn.0]+0x4c",
			"Kokkos::Impl::ParallelFor<…>::execute() const [clone ._omp_fn.0]+0x4c"},
		{"main::{lambda(int)#1}::operator()(std::vector<double, std::allocator<double> >&) const+0x20",
			"main::{lambda(…)#1}::operator()(…) const+0x20"},
		{"std::basic_ostream<char, std::char_traits<char> >& std::operator<< <std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> >&, char const*)",
			"std::basic_ostream<…>& std::operator<< <std::char_traits<…> >(…)"},
		{"a_very_long_function_name_without_any_brackets_at_all_in_it+0x10", "a_very_long_function_name_without_any_brackets_at_all_in_it+0x10"},
		{"unbalanced_template_name_that_goes_on_and_on<int, std::pair<int(+0x10", "unbalanced_template_name_that_goes_on_and_on<int, std::pair<int(+0x10"},
		{"MPI_Allreduce at helpers/helper_IMB_functions.h:784:22", "MPI_Allreduce at helpers/helper_IMB_functions.h:784:22"},
		{"MPI_Irecv at ExchangeHalo(SparseMatrix_STRUCT const&, Vector_STRUCT&)+0x155", "MPI_Irecv at ExchangeHalo(…)+0x155"},
	} {
		if got := ShortCode(c.in); got != c.want {
			t.Errorf("ShortCode(%q)\n = %q\nwant %q", c.in, got, c.want)
		}
	}
}
