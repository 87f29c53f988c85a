package otf2

// OldArchive writes the hand-encoded archive of OTF2 1.0 to 2.3 record
// layouts (encode_test.go) for the external tests.
var OldArchive = oldArchive

// LegacyOpenMPArchive writes the OTF2 1.x OpenMP archive, or the same
// timeline in OTF2 1.2's records (encode_test.go).
var LegacyOpenMPArchive = legacyOpenMPArchive

// PthreadArchive writes OldArchive with a pthread in process 0.
var PthreadArchive = pthreadArchive

// ContextArchive writes OldArchive's timeline as calling-context records
// (Score-P with unwinding).
var ContextArchive = contextArchive

// UserThreadArchive writes a process whose pthreads share a reused
// location (encode_test.go).
var UserThreadArchive = userThreadArchive

// PthreadSyncArchive writes a process of pthread mutexes and condition
// waits (encode_test.go).
var PthreadSyncArchive = pthreadSyncArchive

// FlushArchive writes OldArchive with Score-P's trace buffer flushes
// (encode_test.go).
var FlushArchive = flushArchive

// UnnestedArchive writes OldArchive with code regions whose Enter and
// Leave records do not nest (encode_test.go).
var UnnestedArchive = unnestedArchive

// GapsArchive writes OldArchive with n recording gaps on rank 0
// (hostile_gaps_test.go).
var GapsArchive = gapsArchive

// CrossThreadNBCArchive writes OldArchive with an MPI_Ibarrier that rank
// 0 completes on another location (nbcthread_test.go).
var CrossThreadNBCArchive = crossThreadNBCArchive

var PolledRecvArchive = polledRecvArchive

// ApexArchive writes a process as APEX records HPX's worker threads
// (encode_test.go).
var ApexArchive = apexArchive
