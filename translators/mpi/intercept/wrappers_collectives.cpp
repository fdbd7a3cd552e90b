// Collective wrappers: blocking, non-blocking, persistent and neighbourhood
// forms, each with its large-count variant. The signatures come from the
// installed MPICH headers (emit_collective_wrappers.py); the behaviour from
// collective_support.h.
#include "collective_support.h"

using namespace vcx::mpi_intercept;
using vcx::mpi::Call;

extern "C" {

int MPI_Barrier(MPI_Comm comm) {
  return blocking_collective(Call::Barrier, comm, 0, [&](MPI_Request* r) {
    return PMPI_Ibarrier(comm, r);
  }, [&] {
    return PMPI_Barrier(comm);
  });
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request) {
  return nonblocking_collective(Call::Ibarrier, comm, 0, request, false, [&] {
    return PMPI_Ibarrier(comm, request);
  });
}

#if MPI_VERSION >= 4

int MPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request) {
  return nonblocking_collective(Call::Barrier_init, comm, 0, request, true, [&] {
    return PMPI_Barrier_init(comm, info, request);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Allgather(const void *sendbuf,
                  int sendcount,
                  MPI_Datatype sendtype,
                  void *recvbuf,
                  int recvcount,
                  MPI_Datatype recvtype,
                  MPI_Comm comm) {
  return blocking_collective(Call::Allgather, comm, 0, [&](MPI_Request* r) {
    return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, r);
  }, [&] {
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  });
}

#if MPI_VERSION >= 4

int MPI_Allgather_c(const void *sendbuf,
                    MPI_Count sendcount,
                    MPI_Datatype sendtype,
                    void *recvbuf,
                    MPI_Count recvcount,
                    MPI_Datatype recvtype,
                    MPI_Comm comm) {
  return blocking_collective(Call::Allgather_c, comm, 0, [&](MPI_Request* r) {
    return PMPI_Iallgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, r);
  }, [&] {
    return PMPI_Allgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Iallgather(const void *sendbuf,
                   int sendcount,
                   MPI_Datatype sendtype,
                   void *recvbuf,
                   int recvcount,
                   MPI_Datatype recvtype,
                   MPI_Comm comm,
                   MPI_Request *request) {
  return nonblocking_collective(Call::Iallgather, comm, 0, request, false, [&] {
    return PMPI_Iallgather(sendbuf,
                           sendcount,
                           sendtype,
                           recvbuf,
                           recvcount,
                           recvtype,
                           comm,
                           request);
  });
}

#if MPI_VERSION >= 4

int MPI_Iallgather_c(const void *sendbuf,
                     MPI_Count sendcount,
                     MPI_Datatype sendtype,
                     void *recvbuf,
                     MPI_Count recvcount,
                     MPI_Datatype recvtype,
                     MPI_Comm comm,
                     MPI_Request *request) {
  return nonblocking_collective(Call::Iallgather_c, comm, 0, request, false, [&] {
    return PMPI_Iallgather_c(sendbuf,
                             sendcount,
                             sendtype,
                             recvbuf,
                             recvcount,
                             recvtype,
                             comm,
                             request);
  });
}

int MPI_Allgather_init(const void *sendbuf,
                       int sendcount,
                       MPI_Datatype sendtype,
                       void *recvbuf,
                       int recvcount,
                       MPI_Datatype recvtype,
                       MPI_Comm comm,
                       MPI_Info info,
                       MPI_Request *request) {
  return nonblocking_collective(Call::Allgather_init, comm, 0, request, true, [&] {
    return PMPI_Allgather_init(sendbuf,
                               sendcount,
                               sendtype,
                               recvbuf,
                               recvcount,
                               recvtype,
                               comm,
                               info,
                               request);
  });
}

int MPI_Allgather_init_c(const void *sendbuf,
                         MPI_Count sendcount,
                         MPI_Datatype sendtype,
                         void *recvbuf,
                         MPI_Count recvcount,
                         MPI_Datatype recvtype,
                         MPI_Comm comm,
                         MPI_Info info,
                         MPI_Request *request) {
  return nonblocking_collective(Call::Allgather_init_c, comm, 0, request, true, [&] {
    return PMPI_Allgather_init_c(sendbuf,
                                 sendcount,
                                 sendtype,
                                 recvbuf,
                                 recvcount,
                                 recvtype,
                                 comm,
                                 info,
                                 request);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Allgatherv(const void *sendbuf,
                   int sendcount,
                   MPI_Datatype sendtype,
                   void *recvbuf,
                   const int recvcounts[],
                   const int displs[],
                   MPI_Datatype recvtype,
                   MPI_Comm comm) {
  return blocking_collective(Call::Allgatherv, comm, 0, [&](MPI_Request* r) {
    return PMPI_Iallgatherv(sendbuf,
                            sendcount,
                            sendtype,
                            recvbuf,
                            recvcounts,
                            displs,
                            recvtype,
                            comm,
                            r);
  }, [&] {
    return PMPI_Allgatherv(sendbuf,
                           sendcount,
                           sendtype,
                           recvbuf,
                           recvcounts,
                           displs,
                           recvtype,
                           comm);
  });
}

#if MPI_VERSION >= 4

int MPI_Allgatherv_c(const void *sendbuf,
                     MPI_Count sendcount,
                     MPI_Datatype sendtype,
                     void *recvbuf,
                     const MPI_Count recvcounts[],
                     const MPI_Aint displs[],
                     MPI_Datatype recvtype,
                     MPI_Comm comm) {
  return blocking_collective(Call::Allgatherv_c, comm, 0, [&](MPI_Request* r) {
    return PMPI_Iallgatherv_c(sendbuf,
                              sendcount,
                              sendtype,
                              recvbuf,
                              recvcounts,
                              displs,
                              recvtype,
                              comm,
                              r);
  }, [&] {
    return PMPI_Allgatherv_c(sendbuf,
                             sendcount,
                             sendtype,
                             recvbuf,
                             recvcounts,
                             displs,
                             recvtype,
                             comm);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Iallgatherv(const void *sendbuf,
                    int sendcount,
                    MPI_Datatype sendtype,
                    void *recvbuf,
                    const int recvcounts[],
                    const int displs[],
                    MPI_Datatype recvtype,
                    MPI_Comm comm,
                    MPI_Request *request) {
  return nonblocking_collective(Call::Iallgatherv, comm, 0, request, false, [&] {
    return PMPI_Iallgatherv(sendbuf,
                            sendcount,
                            sendtype,
                            recvbuf,
                            recvcounts,
                            displs,
                            recvtype,
                            comm,
                            request);
  });
}

#if MPI_VERSION >= 4

int MPI_Iallgatherv_c(const void *sendbuf,
                      MPI_Count sendcount,
                      MPI_Datatype sendtype,
                      void *recvbuf,
                      const MPI_Count recvcounts[],
                      const MPI_Aint displs[],
                      MPI_Datatype recvtype,
                      MPI_Comm comm,
                      MPI_Request *request) {
  return nonblocking_collective(Call::Iallgatherv_c, comm, 0, request, false, [&] {
    return PMPI_Iallgatherv_c(sendbuf,
                              sendcount,
                              sendtype,
                              recvbuf,
                              recvcounts,
                              displs,
                              recvtype,
                              comm,
                              request);
  });
}

int MPI_Allgatherv_init(const void *sendbuf,
                        int sendcount,
                        MPI_Datatype sendtype,
                        void *recvbuf,
                        const int recvcounts[],
                        const int displs[],
                        MPI_Datatype recvtype,
                        MPI_Comm comm,
                        MPI_Info info,
                        MPI_Request *request) {
  return nonblocking_collective(Call::Allgatherv_init, comm, 0, request, true, [&] {
    return PMPI_Allgatherv_init(sendbuf,
                                sendcount,
                                sendtype,
                                recvbuf,
                                recvcounts,
                                displs,
                                recvtype,
                                comm,
                                info,
                                request);
  });
}

int MPI_Allgatherv_init_c(const void *sendbuf,
                          MPI_Count sendcount,
                          MPI_Datatype sendtype,
                          void *recvbuf,
                          const MPI_Count recvcounts[],
                          const MPI_Aint displs[],
                          MPI_Datatype recvtype,
                          MPI_Comm comm,
                          MPI_Info info,
                          MPI_Request *request) {
  return nonblocking_collective(Call::Allgatherv_init_c, comm, 0, request, true, [&] {
    return PMPI_Allgatherv_init_c(sendbuf,
                                  sendcount,
                                  sendtype,
                                  recvbuf,
                                  recvcounts,
                                  displs,
                                  recvtype,
                                  comm,
                                  info,
                                  request);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Alltoall(const void *sendbuf,
                 int sendcount,
                 MPI_Datatype sendtype,
                 void *recvbuf,
                 int recvcount,
                 MPI_Datatype recvtype,
                 MPI_Comm comm) {
  return blocking_collective(Call::Alltoall, comm, 0, [&](MPI_Request* r) {
    return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, r);
  }, [&] {
    return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  });
}

#if MPI_VERSION >= 4

int MPI_Alltoall_c(const void *sendbuf,
                   MPI_Count sendcount,
                   MPI_Datatype sendtype,
                   void *recvbuf,
                   MPI_Count recvcount,
                   MPI_Datatype recvtype,
                   MPI_Comm comm) {
  return blocking_collective(Call::Alltoall_c, comm, 0, [&](MPI_Request* r) {
    return PMPI_Ialltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, r);
  }, [&] {
    return PMPI_Alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Ialltoall(const void *sendbuf,
                  int sendcount,
                  MPI_Datatype sendtype,
                  void *recvbuf,
                  int recvcount,
                  MPI_Datatype recvtype,
                  MPI_Comm comm,
                  MPI_Request *request) {
  return nonblocking_collective(Call::Ialltoall, comm, 0, request, false, [&] {
    return PMPI_Ialltoall(sendbuf,
                          sendcount,
                          sendtype,
                          recvbuf,
                          recvcount,
                          recvtype,
                          comm,
                          request);
  });
}

#if MPI_VERSION >= 4

int MPI_Ialltoall_c(const void *sendbuf,
                    MPI_Count sendcount,
                    MPI_Datatype sendtype,
                    void *recvbuf,
                    MPI_Count recvcount,
                    MPI_Datatype recvtype,
                    MPI_Comm comm,
                    MPI_Request *request) {
  return nonblocking_collective(Call::Ialltoall_c, comm, 0, request, false, [&] {
    return PMPI_Ialltoall_c(sendbuf,
                            sendcount,
                            sendtype,
                            recvbuf,
                            recvcount,
                            recvtype,
                            comm,
                            request);
  });
}

int MPI_Alltoall_init(const void *sendbuf,
                      int sendcount,
                      MPI_Datatype sendtype,
                      void *recvbuf,
                      int recvcount,
                      MPI_Datatype recvtype,
                      MPI_Comm comm,
                      MPI_Info info,
                      MPI_Request *request) {
  return nonblocking_collective(Call::Alltoall_init, comm, 0, request, true, [&] {
    return PMPI_Alltoall_init(sendbuf,
                              sendcount,
                              sendtype,
                              recvbuf,
                              recvcount,
                              recvtype,
                              comm,
                              info,
                              request);
  });
}

int MPI_Alltoall_init_c(const void *sendbuf,
                        MPI_Count sendcount,
                        MPI_Datatype sendtype,
                        void *recvbuf,
                        MPI_Count recvcount,
                        MPI_Datatype recvtype,
                        MPI_Comm comm,
                        MPI_Info info,
                        MPI_Request *request) {
  return nonblocking_collective(Call::Alltoall_init_c, comm, 0, request, true, [&] {
    return PMPI_Alltoall_init_c(sendbuf,
                                sendcount,
                                sendtype,
                                recvbuf,
                                recvcount,
                                recvtype,
                                comm,
                                info,
                                request);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Alltoallv(const void *sendbuf,
                  const int sendcounts[],
                  const int sdispls[],
                  MPI_Datatype sendtype,
                  void *recvbuf,
                  const int recvcounts[],
                  const int rdispls[],
                  MPI_Datatype recvtype,
                  MPI_Comm comm) {
  return blocking_collective(Call::Alltoallv, comm, 0, [&](MPI_Request* r) {
    return PMPI_Ialltoallv(sendbuf,
                           sendcounts,
                           sdispls,
                           sendtype,
                           recvbuf,
                           recvcounts,
                           rdispls,
                           recvtype,
                           comm,
                           r);
  }, [&] {
    return PMPI_Alltoallv(sendbuf,
                          sendcounts,
                          sdispls,
                          sendtype,
                          recvbuf,
                          recvcounts,
                          rdispls,
                          recvtype,
                          comm);
  });
}

#if MPI_VERSION >= 4

int MPI_Alltoallv_c(const void *sendbuf,
                    const MPI_Count sendcounts[],
                    const MPI_Aint sdispls[],
                    MPI_Datatype sendtype,
                    void *recvbuf,
                    const MPI_Count recvcounts[],
                    const MPI_Aint rdispls[],
                    MPI_Datatype recvtype,
                    MPI_Comm comm) {
  return blocking_collective(Call::Alltoallv_c, comm, 0, [&](MPI_Request* r) {
    return PMPI_Ialltoallv_c(sendbuf,
                             sendcounts,
                             sdispls,
                             sendtype,
                             recvbuf,
                             recvcounts,
                             rdispls,
                             recvtype,
                             comm,
                             r);
  }, [&] {
    return PMPI_Alltoallv_c(sendbuf,
                            sendcounts,
                            sdispls,
                            sendtype,
                            recvbuf,
                            recvcounts,
                            rdispls,
                            recvtype,
                            comm);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Ialltoallv(const void *sendbuf,
                   const int sendcounts[],
                   const int sdispls[],
                   MPI_Datatype sendtype,
                   void *recvbuf,
                   const int recvcounts[],
                   const int rdispls[],
                   MPI_Datatype recvtype,
                   MPI_Comm comm,
                   MPI_Request *request) {
  return nonblocking_collective(Call::Ialltoallv, comm, 0, request, false, [&] {
    return PMPI_Ialltoallv(sendbuf,
                           sendcounts,
                           sdispls,
                           sendtype,
                           recvbuf,
                           recvcounts,
                           rdispls,
                           recvtype,
                           comm,
                           request);
  });
}

#if MPI_VERSION >= 4

int MPI_Ialltoallv_c(const void *sendbuf,
                     const MPI_Count sendcounts[],
                     const MPI_Aint sdispls[],
                     MPI_Datatype sendtype,
                     void *recvbuf,
                     const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[],
                     MPI_Datatype recvtype,
                     MPI_Comm comm,
                     MPI_Request *request) {
  return nonblocking_collective(Call::Ialltoallv_c, comm, 0, request, false, [&] {
    return PMPI_Ialltoallv_c(sendbuf,
                             sendcounts,
                             sdispls,
                             sendtype,
                             recvbuf,
                             recvcounts,
                             rdispls,
                             recvtype,
                             comm,
                             request);
  });
}

int MPI_Alltoallv_init(const void *sendbuf,
                       const int sendcounts[],
                       const int sdispls[],
                       MPI_Datatype sendtype,
                       void *recvbuf,
                       const int recvcounts[],
                       const int rdispls[],
                       MPI_Datatype recvtype,
                       MPI_Comm comm,
                       MPI_Info info,
                       MPI_Request *request) {
  return nonblocking_collective(Call::Alltoallv_init, comm, 0, request, true, [&] {
    return PMPI_Alltoallv_init(sendbuf,
                               sendcounts,
                               sdispls,
                               sendtype,
                               recvbuf,
                               recvcounts,
                               rdispls,
                               recvtype,
                               comm,
                               info,
                               request);
  });
}

int MPI_Alltoallv_init_c(const void *sendbuf,
                         const MPI_Count sendcounts[],
                         const MPI_Aint sdispls[],
                         MPI_Datatype sendtype,
                         void *recvbuf,
                         const MPI_Count recvcounts[],
                         const MPI_Aint rdispls[],
                         MPI_Datatype recvtype,
                         MPI_Comm comm,
                         MPI_Info info,
                         MPI_Request *request) {
  return nonblocking_collective(Call::Alltoallv_init_c, comm, 0, request, true, [&] {
    return PMPI_Alltoallv_init_c(sendbuf,
                                 sendcounts,
                                 sdispls,
                                 sendtype,
                                 recvbuf,
                                 recvcounts,
                                 rdispls,
                                 recvtype,
                                 comm,
                                 info,
                                 request);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Alltoallw(const void *sendbuf,
                  const int sendcounts[],
                  const int sdispls[],
                  const MPI_Datatype sendtypes[],
                  void *recvbuf,
                  const int recvcounts[],
                  const int rdispls[],
                  const MPI_Datatype recvtypes[],
                  MPI_Comm comm) {
  return blocking_collective(Call::Alltoallw, comm, 0, [&](MPI_Request* r) {
    return PMPI_Ialltoallw(sendbuf,
                           sendcounts,
                           sdispls,
                           sendtypes,
                           recvbuf,
                           recvcounts,
                           rdispls,
                           recvtypes,
                           comm,
                           r);
  }, [&] {
    return PMPI_Alltoallw(sendbuf,
                          sendcounts,
                          sdispls,
                          sendtypes,
                          recvbuf,
                          recvcounts,
                          rdispls,
                          recvtypes,
                          comm);
  });
}

#if MPI_VERSION >= 4

int MPI_Alltoallw_c(const void *sendbuf,
                    const MPI_Count sendcounts[],
                    const MPI_Aint sdispls[],
                    const MPI_Datatype sendtypes[],
                    void *recvbuf,
                    const MPI_Count recvcounts[],
                    const MPI_Aint rdispls[],
                    const MPI_Datatype recvtypes[],
                    MPI_Comm comm) {
  return blocking_collective(Call::Alltoallw_c, comm, 0, [&](MPI_Request* r) {
    return PMPI_Ialltoallw_c(sendbuf,
                             sendcounts,
                             sdispls,
                             sendtypes,
                             recvbuf,
                             recvcounts,
                             rdispls,
                             recvtypes,
                             comm,
                             r);
  }, [&] {
    return PMPI_Alltoallw_c(sendbuf,
                            sendcounts,
                            sdispls,
                            sendtypes,
                            recvbuf,
                            recvcounts,
                            rdispls,
                            recvtypes,
                            comm);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Ialltoallw(const void *sendbuf,
                   const int sendcounts[],
                   const int sdispls[],
                   const MPI_Datatype sendtypes[],
                   void *recvbuf,
                   const int recvcounts[],
                   const int rdispls[],
                   const MPI_Datatype recvtypes[],
                   MPI_Comm comm,
                   MPI_Request *request) {
  return nonblocking_collective(Call::Ialltoallw, comm, 0, request, false, [&] {
    return PMPI_Ialltoallw(sendbuf,
                           sendcounts,
                           sdispls,
                           sendtypes,
                           recvbuf,
                           recvcounts,
                           rdispls,
                           recvtypes,
                           comm,
                           request);
  });
}

#if MPI_VERSION >= 4

int MPI_Ialltoallw_c(const void *sendbuf,
                     const MPI_Count sendcounts[],
                     const MPI_Aint sdispls[],
                     const MPI_Datatype sendtypes[],
                     void *recvbuf,
                     const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[],
                     const MPI_Datatype recvtypes[],
                     MPI_Comm comm,
                     MPI_Request *request) {
  return nonblocking_collective(Call::Ialltoallw_c, comm, 0, request, false, [&] {
    return PMPI_Ialltoallw_c(sendbuf,
                             sendcounts,
                             sdispls,
                             sendtypes,
                             recvbuf,
                             recvcounts,
                             rdispls,
                             recvtypes,
                             comm,
                             request);
  });
}

int MPI_Alltoallw_init(const void *sendbuf,
                       const int sendcounts[],
                       const int sdispls[],
                       const MPI_Datatype sendtypes[],
                       void *recvbuf,
                       const int recvcounts[],
                       const int rdispls[],
                       const MPI_Datatype recvtypes[],
                       MPI_Comm comm,
                       MPI_Info info,
                       MPI_Request *request) {
  return nonblocking_collective(Call::Alltoallw_init, comm, 0, request, true, [&] {
    return PMPI_Alltoallw_init(sendbuf,
                               sendcounts,
                               sdispls,
                               sendtypes,
                               recvbuf,
                               recvcounts,
                               rdispls,
                               recvtypes,
                               comm,
                               info,
                               request);
  });
}

int MPI_Alltoallw_init_c(const void *sendbuf,
                         const MPI_Count sendcounts[],
                         const MPI_Aint sdispls[],
                         const MPI_Datatype sendtypes[],
                         void *recvbuf,
                         const MPI_Count recvcounts[],
                         const MPI_Aint rdispls[],
                         const MPI_Datatype recvtypes[],
                         MPI_Comm comm,
                         MPI_Info info,
                         MPI_Request *request) {
  return nonblocking_collective(Call::Alltoallw_init_c, comm, 0, request, true, [&] {
    return PMPI_Alltoallw_init_c(sendbuf,
                                 sendcounts,
                                 sdispls,
                                 sendtypes,
                                 recvbuf,
                                 recvcounts,
                                 rdispls,
                                 recvtypes,
                                 comm,
                                 info,
                                 request);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Allreduce(const void *sendbuf,
                  void *recvbuf,
                  int count,
                  MPI_Datatype datatype,
                  MPI_Op op,
                  MPI_Comm comm) {
  return blocking_collective(Call::Allreduce, comm, 0, [&](MPI_Request* r) {
    return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, r);
  }, [&] {
    return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
  });
}

#if MPI_VERSION >= 4

int MPI_Allreduce_c(const void *sendbuf,
                    void *recvbuf,
                    MPI_Count count,
                    MPI_Datatype datatype,
                    MPI_Op op,
                    MPI_Comm comm) {
  return blocking_collective(Call::Allreduce_c, comm, 0, [&](MPI_Request* r) {
    return PMPI_Iallreduce_c(sendbuf, recvbuf, count, datatype, op, comm, r);
  }, [&] {
    return PMPI_Allreduce_c(sendbuf, recvbuf, count, datatype, op, comm);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Iallreduce(const void *sendbuf,
                   void *recvbuf,
                   int count,
                   MPI_Datatype datatype,
                   MPI_Op op,
                   MPI_Comm comm,
                   MPI_Request *request) {
  return nonblocking_collective(Call::Iallreduce, comm, 0, request, false, [&] {
    return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
  });
}

#if MPI_VERSION >= 4

int MPI_Iallreduce_c(const void *sendbuf,
                     void *recvbuf,
                     MPI_Count count,
                     MPI_Datatype datatype,
                     MPI_Op op,
                     MPI_Comm comm,
                     MPI_Request *request) {
  return nonblocking_collective(Call::Iallreduce_c, comm, 0, request, false, [&] {
    return PMPI_Iallreduce_c(sendbuf, recvbuf, count, datatype, op, comm, request);
  });
}

int MPI_Allreduce_init(const void *sendbuf,
                       void *recvbuf,
                       int count,
                       MPI_Datatype datatype,
                       MPI_Op op,
                       MPI_Comm comm,
                       MPI_Info info,
                       MPI_Request *request) {
  return nonblocking_collective(Call::Allreduce_init, comm, 0, request, true, [&] {
    return PMPI_Allreduce_init(sendbuf, recvbuf, count, datatype, op, comm, info, request);
  });
}

int MPI_Allreduce_init_c(const void *sendbuf,
                         void *recvbuf,
                         MPI_Count count,
                         MPI_Datatype datatype,
                         MPI_Op op,
                         MPI_Comm comm,
                         MPI_Info info,
                         MPI_Request *request) {
  return nonblocking_collective(Call::Allreduce_init_c, comm, 0, request, true, [&] {
    return PMPI_Allreduce_init_c(sendbuf, recvbuf, count, datatype, op, comm, info, request);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Reduce_scatter(const void *sendbuf,
                       void *recvbuf,
                       const int recvcounts[],
                       MPI_Datatype datatype,
                       MPI_Op op,
                       MPI_Comm comm) {
  return blocking_collective(Call::Reduce_scatter, comm, 0, [&](MPI_Request* r) {
    return PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, r);
  }, [&] {
    return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
  });
}

#if MPI_VERSION >= 4

int MPI_Reduce_scatter_c(const void *sendbuf,
                         void *recvbuf,
                         const MPI_Count recvcounts[],
                         MPI_Datatype datatype,
                         MPI_Op op,
                         MPI_Comm comm) {
  return blocking_collective(Call::Reduce_scatter_c, comm, 0, [&](MPI_Request* r) {
    return PMPI_Ireduce_scatter_c(sendbuf, recvbuf, recvcounts, datatype, op, comm, r);
  }, [&] {
    return PMPI_Reduce_scatter_c(sendbuf, recvbuf, recvcounts, datatype, op, comm);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Ireduce_scatter(const void *sendbuf,
                        void *recvbuf,
                        const int recvcounts[],
                        MPI_Datatype datatype,
                        MPI_Op op,
                        MPI_Comm comm,
                        MPI_Request *request) {
  return nonblocking_collective(Call::Ireduce_scatter, comm, 0, request, false, [&] {
    return PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request);
  });
}

#if MPI_VERSION >= 4

int MPI_Ireduce_scatter_c(const void *sendbuf,
                          void *recvbuf,
                          const MPI_Count recvcounts[],
                          MPI_Datatype datatype,
                          MPI_Op op,
                          MPI_Comm comm,
                          MPI_Request *request) {
  return nonblocking_collective(Call::Ireduce_scatter_c, comm, 0, request, false, [&] {
    return PMPI_Ireduce_scatter_c(sendbuf, recvbuf, recvcounts, datatype, op, comm, request);
  });
}

int MPI_Reduce_scatter_init(const void *sendbuf,
                            void *recvbuf,
                            const int recvcounts[],
                            MPI_Datatype datatype,
                            MPI_Op op,
                            MPI_Comm comm,
                            MPI_Info info,
                            MPI_Request *request) {
  return nonblocking_collective(Call::Reduce_scatter_init, comm, 0, request, true, [&] {
    return PMPI_Reduce_scatter_init(sendbuf,
                                    recvbuf,
                                    recvcounts,
                                    datatype,
                                    op,
                                    comm,
                                    info,
                                    request);
  });
}

int MPI_Reduce_scatter_init_c(const void *sendbuf,
                              void *recvbuf,
                              const MPI_Count recvcounts[],
                              MPI_Datatype datatype,
                              MPI_Op op,
                              MPI_Comm comm,
                              MPI_Info info,
                              MPI_Request *request) {
  return nonblocking_collective(Call::Reduce_scatter_init_c, comm, 0, request, true, [&] {
    return PMPI_Reduce_scatter_init_c(sendbuf,
                                      recvbuf,
                                      recvcounts,
                                      datatype,
                                      op,
                                      comm,
                                      info,
                                      request);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Reduce_scatter_block(const void *sendbuf,
                             void *recvbuf,
                             int recvcount,
                             MPI_Datatype datatype,
                             MPI_Op op,
                             MPI_Comm comm) {
  return blocking_collective(Call::Reduce_scatter_block, comm, 0, [&](MPI_Request* r) {
    return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, r);
  }, [&] {
    return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
  });
}

#if MPI_VERSION >= 4

int MPI_Reduce_scatter_block_c(const void *sendbuf,
                               void *recvbuf,
                               MPI_Count recvcount,
                               MPI_Datatype datatype,
                               MPI_Op op,
                               MPI_Comm comm) {
  return blocking_collective(Call::Reduce_scatter_block_c, comm, 0, [&](MPI_Request* r) {
    return PMPI_Ireduce_scatter_block_c(sendbuf, recvbuf, recvcount, datatype, op, comm, r);
  }, [&] {
    return PMPI_Reduce_scatter_block_c(sendbuf, recvbuf, recvcount, datatype, op, comm);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Ireduce_scatter_block(const void *sendbuf,
                              void *recvbuf,
                              int recvcount,
                              MPI_Datatype datatype,
                              MPI_Op op,
                              MPI_Comm comm,
                              MPI_Request *request) {
  return nonblocking_collective(Call::Ireduce_scatter_block, comm, 0, request, false, [&] {
    return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, request);
  });
}

#if MPI_VERSION >= 4

int MPI_Ireduce_scatter_block_c(const void *sendbuf,
                                void *recvbuf,
                                MPI_Count recvcount,
                                MPI_Datatype datatype,
                                MPI_Op op,
                                MPI_Comm comm,
                                MPI_Request *request) {
  return nonblocking_collective(Call::Ireduce_scatter_block_c, comm, 0, request, false, [&] {
    return PMPI_Ireduce_scatter_block_c(sendbuf, recvbuf, recvcount, datatype, op, comm, request);
  });
}

int MPI_Reduce_scatter_block_init(const void *sendbuf,
                                  void *recvbuf,
                                  int recvcount,
                                  MPI_Datatype datatype,
                                  MPI_Op op,
                                  MPI_Comm comm,
                                  MPI_Info info,
                                  MPI_Request *request) {
  return nonblocking_collective(Call::Reduce_scatter_block_init, comm, 0, request, true, [&] {
    return PMPI_Reduce_scatter_block_init(sendbuf,
                                          recvbuf,
                                          recvcount,
                                          datatype,
                                          op,
                                          comm,
                                          info,
                                          request);
  });
}

int MPI_Reduce_scatter_block_init_c(const void *sendbuf,
                                    void *recvbuf,
                                    MPI_Count recvcount,
                                    MPI_Datatype datatype,
                                    MPI_Op op,
                                    MPI_Comm comm,
                                    MPI_Info info,
                                    MPI_Request *request) {
  return nonblocking_collective(Call::Reduce_scatter_block_init_c, comm, 0, request, true, [&] {
    return PMPI_Reduce_scatter_block_init_c(sendbuf,
                                            recvbuf,
                                            recvcount,
                                            datatype,
                                            op,
                                            comm,
                                            info,
                                            request);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return blocking_collective(Call::Bcast, comm, root, [&](MPI_Request* r) {
    return PMPI_Ibcast(buffer, count, datatype, root, comm, r);
  }, [&] {
    return PMPI_Bcast(buffer, count, datatype, root, comm);
  });
}

#if MPI_VERSION >= 4

int MPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return blocking_collective(Call::Bcast_c, comm, root, [&](MPI_Request* r) {
    return PMPI_Ibcast_c(buffer, count, datatype, root, comm, r);
  }, [&] {
    return PMPI_Bcast_c(buffer, count, datatype, root, comm);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Ibcast(void *buffer,
               int count,
               MPI_Datatype datatype,
               int root,
               MPI_Comm comm,
               MPI_Request *request) {
  return nonblocking_collective(Call::Ibcast, comm, root, request, false, [&] {
    return PMPI_Ibcast(buffer, count, datatype, root, comm, request);
  });
}

#if MPI_VERSION >= 4

int MPI_Ibcast_c(void *buffer,
                 MPI_Count count,
                 MPI_Datatype datatype,
                 int root,
                 MPI_Comm comm,
                 MPI_Request *request) {
  return nonblocking_collective(Call::Ibcast_c, comm, root, request, false, [&] {
    return PMPI_Ibcast_c(buffer, count, datatype, root, comm, request);
  });
}

int MPI_Bcast_init(void *buffer,
                   int count,
                   MPI_Datatype datatype,
                   int root,
                   MPI_Comm comm,
                   MPI_Info info,
                   MPI_Request *request) {
  return nonblocking_collective(Call::Bcast_init, comm, root, request, true, [&] {
    return PMPI_Bcast_init(buffer, count, datatype, root, comm, info, request);
  });
}

int MPI_Bcast_init_c(void *buffer,
                     MPI_Count count,
                     MPI_Datatype datatype,
                     int root,
                     MPI_Comm comm,
                     MPI_Info info,
                     MPI_Request *request) {
  return nonblocking_collective(Call::Bcast_init_c, comm, root, request, true, [&] {
    return PMPI_Bcast_init_c(buffer, count, datatype, root, comm, info, request);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Scatter(const void *sendbuf,
                int sendcount,
                MPI_Datatype sendtype,
                void *recvbuf,
                int recvcount,
                MPI_Datatype recvtype,
                int root,
                MPI_Comm comm) {
  return blocking_collective(Call::Scatter, comm, root, [&](MPI_Request* r) {
    return PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, r);
  }, [&] {
    return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  });
}

#if MPI_VERSION >= 4

int MPI_Scatter_c(const void *sendbuf,
                  MPI_Count sendcount,
                  MPI_Datatype sendtype,
                  void *recvbuf,
                  MPI_Count recvcount,
                  MPI_Datatype recvtype,
                  int root,
                  MPI_Comm comm) {
  return blocking_collective(Call::Scatter_c, comm, root, [&](MPI_Request* r) {
    return PMPI_Iscatter_c(sendbuf,
                           sendcount,
                           sendtype,
                           recvbuf,
                           recvcount,
                           recvtype,
                           root,
                           comm,
                           r);
  }, [&] {
    return PMPI_Scatter_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Iscatter(const void *sendbuf,
                 int sendcount,
                 MPI_Datatype sendtype,
                 void *recvbuf,
                 int recvcount,
                 MPI_Datatype recvtype,
                 int root,
                 MPI_Comm comm,
                 MPI_Request *request) {
  return nonblocking_collective(Call::Iscatter, comm, root, request, false, [&] {
    return PMPI_Iscatter(sendbuf,
                         sendcount,
                         sendtype,
                         recvbuf,
                         recvcount,
                         recvtype,
                         root,
                         comm,
                         request);
  });
}

#if MPI_VERSION >= 4

int MPI_Iscatter_c(const void *sendbuf,
                   MPI_Count sendcount,
                   MPI_Datatype sendtype,
                   void *recvbuf,
                   MPI_Count recvcount,
                   MPI_Datatype recvtype,
                   int root,
                   MPI_Comm comm,
                   MPI_Request *request) {
  return nonblocking_collective(Call::Iscatter_c, comm, root, request, false, [&] {
    return PMPI_Iscatter_c(sendbuf,
                           sendcount,
                           sendtype,
                           recvbuf,
                           recvcount,
                           recvtype,
                           root,
                           comm,
                           request);
  });
}

int MPI_Scatter_init(const void *sendbuf,
                     int sendcount,
                     MPI_Datatype sendtype,
                     void *recvbuf,
                     int recvcount,
                     MPI_Datatype recvtype,
                     int root,
                     MPI_Comm comm,
                     MPI_Info info,
                     MPI_Request *request) {
  return nonblocking_collective(Call::Scatter_init, comm, root, request, true, [&] {
    return PMPI_Scatter_init(sendbuf,
                             sendcount,
                             sendtype,
                             recvbuf,
                             recvcount,
                             recvtype,
                             root,
                             comm,
                             info,
                             request);
  });
}

int MPI_Scatter_init_c(const void *sendbuf,
                       MPI_Count sendcount,
                       MPI_Datatype sendtype,
                       void *recvbuf,
                       MPI_Count recvcount,
                       MPI_Datatype recvtype,
                       int root,
                       MPI_Comm comm,
                       MPI_Info info,
                       MPI_Request *request) {
  return nonblocking_collective(Call::Scatter_init_c, comm, root, request, true, [&] {
    return PMPI_Scatter_init_c(sendbuf,
                               sendcount,
                               sendtype,
                               recvbuf,
                               recvcount,
                               recvtype,
                               root,
                               comm,
                               info,
                               request);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Scatterv(const void *sendbuf,
                 const int sendcounts[],
                 const int displs[],
                 MPI_Datatype sendtype,
                 void *recvbuf,
                 int recvcount,
                 MPI_Datatype recvtype,
                 int root,
                 MPI_Comm comm) {
  return blocking_collective(Call::Scatterv, comm, root, [&](MPI_Request* r) {
    return PMPI_Iscatterv(sendbuf,
                          sendcounts,
                          displs,
                          sendtype,
                          recvbuf,
                          recvcount,
                          recvtype,
                          root,
                          comm,
                          r);
  }, [&] {
    return PMPI_Scatterv(sendbuf,
                         sendcounts,
                         displs,
                         sendtype,
                         recvbuf,
                         recvcount,
                         recvtype,
                         root,
                         comm);
  });
}

#if MPI_VERSION >= 4

int MPI_Scatterv_c(const void *sendbuf,
                   const MPI_Count sendcounts[],
                   const MPI_Aint displs[],
                   MPI_Datatype sendtype,
                   void *recvbuf,
                   MPI_Count recvcount,
                   MPI_Datatype recvtype,
                   int root,
                   MPI_Comm comm) {
  return blocking_collective(Call::Scatterv_c, comm, root, [&](MPI_Request* r) {
    return PMPI_Iscatterv_c(sendbuf,
                            sendcounts,
                            displs,
                            sendtype,
                            recvbuf,
                            recvcount,
                            recvtype,
                            root,
                            comm,
                            r);
  }, [&] {
    return PMPI_Scatterv_c(sendbuf,
                           sendcounts,
                           displs,
                           sendtype,
                           recvbuf,
                           recvcount,
                           recvtype,
                           root,
                           comm);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Iscatterv(const void *sendbuf,
                  const int sendcounts[],
                  const int displs[],
                  MPI_Datatype sendtype,
                  void *recvbuf,
                  int recvcount,
                  MPI_Datatype recvtype,
                  int root,
                  MPI_Comm comm,
                  MPI_Request *request) {
  return nonblocking_collective(Call::Iscatterv, comm, root, request, false, [&] {
    return PMPI_Iscatterv(sendbuf,
                          sendcounts,
                          displs,
                          sendtype,
                          recvbuf,
                          recvcount,
                          recvtype,
                          root,
                          comm,
                          request);
  });
}

#if MPI_VERSION >= 4

int MPI_Iscatterv_c(const void *sendbuf,
                    const MPI_Count sendcounts[],
                    const MPI_Aint displs[],
                    MPI_Datatype sendtype,
                    void *recvbuf,
                    MPI_Count recvcount,
                    MPI_Datatype recvtype,
                    int root,
                    MPI_Comm comm,
                    MPI_Request *request) {
  return nonblocking_collective(Call::Iscatterv_c, comm, root, request, false, [&] {
    return PMPI_Iscatterv_c(sendbuf,
                            sendcounts,
                            displs,
                            sendtype,
                            recvbuf,
                            recvcount,
                            recvtype,
                            root,
                            comm,
                            request);
  });
}

int MPI_Scatterv_init(const void *sendbuf,
                      const int sendcounts[],
                      const int displs[],
                      MPI_Datatype sendtype,
                      void *recvbuf,
                      int recvcount,
                      MPI_Datatype recvtype,
                      int root,
                      MPI_Comm comm,
                      MPI_Info info,
                      MPI_Request *request) {
  return nonblocking_collective(Call::Scatterv_init, comm, root, request, true, [&] {
    return PMPI_Scatterv_init(sendbuf,
                              sendcounts,
                              displs,
                              sendtype,
                              recvbuf,
                              recvcount,
                              recvtype,
                              root,
                              comm,
                              info,
                              request);
  });
}

int MPI_Scatterv_init_c(const void *sendbuf,
                        const MPI_Count sendcounts[],
                        const MPI_Aint displs[],
                        MPI_Datatype sendtype,
                        void *recvbuf,
                        MPI_Count recvcount,
                        MPI_Datatype recvtype,
                        int root,
                        MPI_Comm comm,
                        MPI_Info info,
                        MPI_Request *request) {
  return nonblocking_collective(Call::Scatterv_init_c, comm, root, request, true, [&] {
    return PMPI_Scatterv_init_c(sendbuf,
                                sendcounts,
                                displs,
                                sendtype,
                                recvbuf,
                                recvcount,
                                recvtype,
                                root,
                                comm,
                                info,
                                request);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Gather(const void *sendbuf,
               int sendcount,
               MPI_Datatype sendtype,
               void *recvbuf,
               int recvcount,
               MPI_Datatype recvtype,
               int root,
               MPI_Comm comm) {
  return blocking_collective(Call::Gather, comm, root, [&](MPI_Request* r) {
    return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, r);
  }, [&] {
    return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  });
}

#if MPI_VERSION >= 4

int MPI_Gather_c(const void *sendbuf,
                 MPI_Count sendcount,
                 MPI_Datatype sendtype,
                 void *recvbuf,
                 MPI_Count recvcount,
                 MPI_Datatype recvtype,
                 int root,
                 MPI_Comm comm) {
  return blocking_collective(Call::Gather_c, comm, root, [&](MPI_Request* r) {
    return PMPI_Igather_c(sendbuf,
                          sendcount,
                          sendtype,
                          recvbuf,
                          recvcount,
                          recvtype,
                          root,
                          comm,
                          r);
  }, [&] {
    return PMPI_Gather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Igather(const void *sendbuf,
                int sendcount,
                MPI_Datatype sendtype,
                void *recvbuf,
                int recvcount,
                MPI_Datatype recvtype,
                int root,
                MPI_Comm comm,
                MPI_Request *request) {
  return nonblocking_collective(Call::Igather, comm, root, request, false, [&] {
    return PMPI_Igather(sendbuf,
                        sendcount,
                        sendtype,
                        recvbuf,
                        recvcount,
                        recvtype,
                        root,
                        comm,
                        request);
  });
}

#if MPI_VERSION >= 4

int MPI_Igather_c(const void *sendbuf,
                  MPI_Count sendcount,
                  MPI_Datatype sendtype,
                  void *recvbuf,
                  MPI_Count recvcount,
                  MPI_Datatype recvtype,
                  int root,
                  MPI_Comm comm,
                  MPI_Request *request) {
  return nonblocking_collective(Call::Igather_c, comm, root, request, false, [&] {
    return PMPI_Igather_c(sendbuf,
                          sendcount,
                          sendtype,
                          recvbuf,
                          recvcount,
                          recvtype,
                          root,
                          comm,
                          request);
  });
}

int MPI_Gather_init(const void *sendbuf,
                    int sendcount,
                    MPI_Datatype sendtype,
                    void *recvbuf,
                    int recvcount,
                    MPI_Datatype recvtype,
                    int root,
                    MPI_Comm comm,
                    MPI_Info info,
                    MPI_Request *request) {
  return nonblocking_collective(Call::Gather_init, comm, root, request, true, [&] {
    return PMPI_Gather_init(sendbuf,
                            sendcount,
                            sendtype,
                            recvbuf,
                            recvcount,
                            recvtype,
                            root,
                            comm,
                            info,
                            request);
  });
}

int MPI_Gather_init_c(const void *sendbuf,
                      MPI_Count sendcount,
                      MPI_Datatype sendtype,
                      void *recvbuf,
                      MPI_Count recvcount,
                      MPI_Datatype recvtype,
                      int root,
                      MPI_Comm comm,
                      MPI_Info info,
                      MPI_Request *request) {
  return nonblocking_collective(Call::Gather_init_c, comm, root, request, true, [&] {
    return PMPI_Gather_init_c(sendbuf,
                              sendcount,
                              sendtype,
                              recvbuf,
                              recvcount,
                              recvtype,
                              root,
                              comm,
                              info,
                              request);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Gatherv(const void *sendbuf,
                int sendcount,
                MPI_Datatype sendtype,
                void *recvbuf,
                const int recvcounts[],
                const int displs[],
                MPI_Datatype recvtype,
                int root,
                MPI_Comm comm) {
  return blocking_collective(Call::Gatherv, comm, root, [&](MPI_Request* r) {
    return PMPI_Igatherv(sendbuf,
                         sendcount,
                         sendtype,
                         recvbuf,
                         recvcounts,
                         displs,
                         recvtype,
                         root,
                         comm,
                         r);
  }, [&] {
    return PMPI_Gatherv(sendbuf,
                        sendcount,
                        sendtype,
                        recvbuf,
                        recvcounts,
                        displs,
                        recvtype,
                        root,
                        comm);
  });
}

#if MPI_VERSION >= 4

int MPI_Gatherv_c(const void *sendbuf,
                  MPI_Count sendcount,
                  MPI_Datatype sendtype,
                  void *recvbuf,
                  const MPI_Count recvcounts[],
                  const MPI_Aint displs[],
                  MPI_Datatype recvtype,
                  int root,
                  MPI_Comm comm) {
  return blocking_collective(Call::Gatherv_c, comm, root, [&](MPI_Request* r) {
    return PMPI_Igatherv_c(sendbuf,
                           sendcount,
                           sendtype,
                           recvbuf,
                           recvcounts,
                           displs,
                           recvtype,
                           root,
                           comm,
                           r);
  }, [&] {
    return PMPI_Gatherv_c(sendbuf,
                          sendcount,
                          sendtype,
                          recvbuf,
                          recvcounts,
                          displs,
                          recvtype,
                          root,
                          comm);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Igatherv(const void *sendbuf,
                 int sendcount,
                 MPI_Datatype sendtype,
                 void *recvbuf,
                 const int recvcounts[],
                 const int displs[],
                 MPI_Datatype recvtype,
                 int root,
                 MPI_Comm comm,
                 MPI_Request *request) {
  return nonblocking_collective(Call::Igatherv, comm, root, request, false, [&] {
    return PMPI_Igatherv(sendbuf,
                         sendcount,
                         sendtype,
                         recvbuf,
                         recvcounts,
                         displs,
                         recvtype,
                         root,
                         comm,
                         request);
  });
}

#if MPI_VERSION >= 4

int MPI_Igatherv_c(const void *sendbuf,
                   MPI_Count sendcount,
                   MPI_Datatype sendtype,
                   void *recvbuf,
                   const MPI_Count recvcounts[],
                   const MPI_Aint displs[],
                   MPI_Datatype recvtype,
                   int root,
                   MPI_Comm comm,
                   MPI_Request *request) {
  return nonblocking_collective(Call::Igatherv_c, comm, root, request, false, [&] {
    return PMPI_Igatherv_c(sendbuf,
                           sendcount,
                           sendtype,
                           recvbuf,
                           recvcounts,
                           displs,
                           recvtype,
                           root,
                           comm,
                           request);
  });
}

int MPI_Gatherv_init(const void *sendbuf,
                     int sendcount,
                     MPI_Datatype sendtype,
                     void *recvbuf,
                     const int recvcounts[],
                     const int displs[],
                     MPI_Datatype recvtype,
                     int root,
                     MPI_Comm comm,
                     MPI_Info info,
                     MPI_Request *request) {
  return nonblocking_collective(Call::Gatherv_init, comm, root, request, true, [&] {
    return PMPI_Gatherv_init(sendbuf,
                             sendcount,
                             sendtype,
                             recvbuf,
                             recvcounts,
                             displs,
                             recvtype,
                             root,
                             comm,
                             info,
                             request);
  });
}

int MPI_Gatherv_init_c(const void *sendbuf,
                       MPI_Count sendcount,
                       MPI_Datatype sendtype,
                       void *recvbuf,
                       const MPI_Count recvcounts[],
                       const MPI_Aint displs[],
                       MPI_Datatype recvtype,
                       int root,
                       MPI_Comm comm,
                       MPI_Info info,
                       MPI_Request *request) {
  return nonblocking_collective(Call::Gatherv_init_c, comm, root, request, true, [&] {
    return PMPI_Gatherv_init_c(sendbuf,
                               sendcount,
                               sendtype,
                               recvbuf,
                               recvcounts,
                               displs,
                               recvtype,
                               root,
                               comm,
                               info,
                               request);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Reduce(const void *sendbuf,
               void *recvbuf,
               int count,
               MPI_Datatype datatype,
               MPI_Op op,
               int root,
               MPI_Comm comm) {
  return blocking_collective(Call::Reduce, comm, root, [&](MPI_Request* r) {
    return PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, r);
  }, [&] {
    return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
  });
}

#if MPI_VERSION >= 4

int MPI_Reduce_c(const void *sendbuf,
                 void *recvbuf,
                 MPI_Count count,
                 MPI_Datatype datatype,
                 MPI_Op op,
                 int root,
                 MPI_Comm comm) {
  return blocking_collective(Call::Reduce_c, comm, root, [&](MPI_Request* r) {
    return PMPI_Ireduce_c(sendbuf, recvbuf, count, datatype, op, root, comm, r);
  }, [&] {
    return PMPI_Reduce_c(sendbuf, recvbuf, count, datatype, op, root, comm);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Ireduce(const void *sendbuf,
                void *recvbuf,
                int count,
                MPI_Datatype datatype,
                MPI_Op op,
                int root,
                MPI_Comm comm,
                MPI_Request *request) {
  return nonblocking_collective(Call::Ireduce, comm, root, request, false, [&] {
    return PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request);
  });
}

#if MPI_VERSION >= 4

int MPI_Ireduce_c(const void *sendbuf,
                  void *recvbuf,
                  MPI_Count count,
                  MPI_Datatype datatype,
                  MPI_Op op,
                  int root,
                  MPI_Comm comm,
                  MPI_Request *request) {
  return nonblocking_collective(Call::Ireduce_c, comm, root, request, false, [&] {
    return PMPI_Ireduce_c(sendbuf, recvbuf, count, datatype, op, root, comm, request);
  });
}

int MPI_Reduce_init(const void *sendbuf,
                    void *recvbuf,
                    int count,
                    MPI_Datatype datatype,
                    MPI_Op op,
                    int root,
                    MPI_Comm comm,
                    MPI_Info info,
                    MPI_Request *request) {
  return nonblocking_collective(Call::Reduce_init, comm, root, request, true, [&] {
    return PMPI_Reduce_init(sendbuf, recvbuf, count, datatype, op, root, comm, info, request);
  });
}

int MPI_Reduce_init_c(const void *sendbuf,
                      void *recvbuf,
                      MPI_Count count,
                      MPI_Datatype datatype,
                      MPI_Op op,
                      int root,
                      MPI_Comm comm,
                      MPI_Info info,
                      MPI_Request *request) {
  return nonblocking_collective(Call::Reduce_init_c, comm, root, request, true, [&] {
    return PMPI_Reduce_init_c(sendbuf, recvbuf, count, datatype, op, root, comm, info, request);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Scan(const void *sendbuf,
             void *recvbuf,
             int count,
             MPI_Datatype datatype,
             MPI_Op op,
             MPI_Comm comm) {
  return blocking_collective(Call::Scan, comm, 0, [&](MPI_Request* r) {
    return PMPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm, r);
  }, [&] {
    return PMPI_Scan(sendbuf, recvbuf, count, datatype, op, comm);
  });
}

#if MPI_VERSION >= 4

int MPI_Scan_c(const void *sendbuf,
               void *recvbuf,
               MPI_Count count,
               MPI_Datatype datatype,
               MPI_Op op,
               MPI_Comm comm) {
  return blocking_collective(Call::Scan_c, comm, 0, [&](MPI_Request* r) {
    return PMPI_Iscan_c(sendbuf, recvbuf, count, datatype, op, comm, r);
  }, [&] {
    return PMPI_Scan_c(sendbuf, recvbuf, count, datatype, op, comm);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Iscan(const void *sendbuf,
              void *recvbuf,
              int count,
              MPI_Datatype datatype,
              MPI_Op op,
              MPI_Comm comm,
              MPI_Request *request) {
  return nonblocking_collective(Call::Iscan, comm, 0, request, false, [&] {
    return PMPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm, request);
  });
}

#if MPI_VERSION >= 4

int MPI_Iscan_c(const void *sendbuf,
                void *recvbuf,
                MPI_Count count,
                MPI_Datatype datatype,
                MPI_Op op,
                MPI_Comm comm,
                MPI_Request *request) {
  return nonblocking_collective(Call::Iscan_c, comm, 0, request, false, [&] {
    return PMPI_Iscan_c(sendbuf, recvbuf, count, datatype, op, comm, request);
  });
}

int MPI_Scan_init(const void *sendbuf,
                  void *recvbuf,
                  int count,
                  MPI_Datatype datatype,
                  MPI_Op op,
                  MPI_Comm comm,
                  MPI_Info info,
                  MPI_Request *request) {
  return nonblocking_collective(Call::Scan_init, comm, 0, request, true, [&] {
    return PMPI_Scan_init(sendbuf, recvbuf, count, datatype, op, comm, info, request);
  });
}

int MPI_Scan_init_c(const void *sendbuf,
                    void *recvbuf,
                    MPI_Count count,
                    MPI_Datatype datatype,
                    MPI_Op op,
                    MPI_Comm comm,
                    MPI_Info info,
                    MPI_Request *request) {
  return nonblocking_collective(Call::Scan_init_c, comm, 0, request, true, [&] {
    return PMPI_Scan_init_c(sendbuf, recvbuf, count, datatype, op, comm, info, request);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Exscan(const void *sendbuf,
               void *recvbuf,
               int count,
               MPI_Datatype datatype,
               MPI_Op op,
               MPI_Comm comm) {
  return blocking_collective(Call::Exscan, comm, 0, [&](MPI_Request* r) {
    return PMPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, r);
  }, [&] {
    return PMPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm);
  });
}

#if MPI_VERSION >= 4

int MPI_Exscan_c(const void *sendbuf,
                 void *recvbuf,
                 MPI_Count count,
                 MPI_Datatype datatype,
                 MPI_Op op,
                 MPI_Comm comm) {
  return blocking_collective(Call::Exscan_c, comm, 0, [&](MPI_Request* r) {
    return PMPI_Iexscan_c(sendbuf, recvbuf, count, datatype, op, comm, r);
  }, [&] {
    return PMPI_Exscan_c(sendbuf, recvbuf, count, datatype, op, comm);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Iexscan(const void *sendbuf,
                void *recvbuf,
                int count,
                MPI_Datatype datatype,
                MPI_Op op,
                MPI_Comm comm,
                MPI_Request *request) {
  return nonblocking_collective(Call::Iexscan, comm, 0, request, false, [&] {
    return PMPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, request);
  });
}

#if MPI_VERSION >= 4

int MPI_Iexscan_c(const void *sendbuf,
                  void *recvbuf,
                  MPI_Count count,
                  MPI_Datatype datatype,
                  MPI_Op op,
                  MPI_Comm comm,
                  MPI_Request *request) {
  return nonblocking_collective(Call::Iexscan_c, comm, 0, request, false, [&] {
    return PMPI_Iexscan_c(sendbuf, recvbuf, count, datatype, op, comm, request);
  });
}

int MPI_Exscan_init(const void *sendbuf,
                    void *recvbuf,
                    int count,
                    MPI_Datatype datatype,
                    MPI_Op op,
                    MPI_Comm comm,
                    MPI_Info info,
                    MPI_Request *request) {
  return nonblocking_collective(Call::Exscan_init, comm, 0, request, true, [&] {
    return PMPI_Exscan_init(sendbuf, recvbuf, count, datatype, op, comm, info, request);
  });
}

int MPI_Exscan_init_c(const void *sendbuf,
                      void *recvbuf,
                      MPI_Count count,
                      MPI_Datatype datatype,
                      MPI_Op op,
                      MPI_Comm comm,
                      MPI_Info info,
                      MPI_Request *request) {
  return nonblocking_collective(Call::Exscan_init_c, comm, 0, request, true, [&] {
    return PMPI_Exscan_init_c(sendbuf, recvbuf, count, datatype, op, comm, info, request);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Neighbor_allgather(const void *sendbuf,
                           int sendcount,
                           MPI_Datatype sendtype,
                           void *recvbuf,
                           int recvcount,
                           MPI_Datatype recvtype,
                           MPI_Comm comm) {
  return blocking_collective(Call::Neighbor_allgather, comm, 0, [&](MPI_Request* r) {
    return PMPI_Ineighbor_allgather(sendbuf,
                                    sendcount,
                                    sendtype,
                                    recvbuf,
                                    recvcount,
                                    recvtype,
                                    comm,
                                    r);
  }, [&] {
    return PMPI_Neighbor_allgather(sendbuf,
                                   sendcount,
                                   sendtype,
                                   recvbuf,
                                   recvcount,
                                   recvtype,
                                   comm);
  });
}

#if MPI_VERSION >= 4

int MPI_Neighbor_allgather_c(const void *sendbuf,
                             MPI_Count sendcount,
                             MPI_Datatype sendtype,
                             void *recvbuf,
                             MPI_Count recvcount,
                             MPI_Datatype recvtype,
                             MPI_Comm comm) {
  return blocking_collective(Call::Neighbor_allgather_c, comm, 0, [&](MPI_Request* r) {
    return PMPI_Ineighbor_allgather_c(sendbuf,
                                      sendcount,
                                      sendtype,
                                      recvbuf,
                                      recvcount,
                                      recvtype,
                                      comm,
                                      r);
  }, [&] {
    return PMPI_Neighbor_allgather_c(sendbuf,
                                     sendcount,
                                     sendtype,
                                     recvbuf,
                                     recvcount,
                                     recvtype,
                                     comm);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Ineighbor_allgather(const void *sendbuf,
                            int sendcount,
                            MPI_Datatype sendtype,
                            void *recvbuf,
                            int recvcount,
                            MPI_Datatype recvtype,
                            MPI_Comm comm,
                            MPI_Request *request) {
  return nonblocking_collective(Call::Ineighbor_allgather, comm, 0, request, false, [&] {
    return PMPI_Ineighbor_allgather(sendbuf,
                                    sendcount,
                                    sendtype,
                                    recvbuf,
                                    recvcount,
                                    recvtype,
                                    comm,
                                    request);
  });
}

#if MPI_VERSION >= 4

int MPI_Ineighbor_allgather_c(const void *sendbuf,
                              MPI_Count sendcount,
                              MPI_Datatype sendtype,
                              void *recvbuf,
                              MPI_Count recvcount,
                              MPI_Datatype recvtype,
                              MPI_Comm comm,
                              MPI_Request *request) {
  return nonblocking_collective(Call::Ineighbor_allgather_c, comm, 0, request, false, [&] {
    return PMPI_Ineighbor_allgather_c(sendbuf,
                                      sendcount,
                                      sendtype,
                                      recvbuf,
                                      recvcount,
                                      recvtype,
                                      comm,
                                      request);
  });
}

int MPI_Neighbor_allgather_init(const void *sendbuf,
                                int sendcount,
                                MPI_Datatype sendtype,
                                void *recvbuf,
                                int recvcount,
                                MPI_Datatype recvtype,
                                MPI_Comm comm,
                                MPI_Info info,
                                MPI_Request *request) {
  return nonblocking_collective(Call::Neighbor_allgather_init, comm, 0, request, true, [&] {
    return PMPI_Neighbor_allgather_init(sendbuf,
                                        sendcount,
                                        sendtype,
                                        recvbuf,
                                        recvcount,
                                        recvtype,
                                        comm,
                                        info,
                                        request);
  });
}

int MPI_Neighbor_allgather_init_c(const void *sendbuf,
                                  MPI_Count sendcount,
                                  MPI_Datatype sendtype,
                                  void *recvbuf,
                                  MPI_Count recvcount,
                                  MPI_Datatype recvtype,
                                  MPI_Comm comm,
                                  MPI_Info info,
                                  MPI_Request *request) {
  return nonblocking_collective(Call::Neighbor_allgather_init_c, comm, 0, request, true, [&] {
    return PMPI_Neighbor_allgather_init_c(sendbuf,
                                          sendcount,
                                          sendtype,
                                          recvbuf,
                                          recvcount,
                                          recvtype,
                                          comm,
                                          info,
                                          request);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Neighbor_allgatherv(const void *sendbuf,
                            int sendcount,
                            MPI_Datatype sendtype,
                            void *recvbuf,
                            const int recvcounts[],
                            const int displs[],
                            MPI_Datatype recvtype,
                            MPI_Comm comm) {
  return blocking_collective(Call::Neighbor_allgatherv, comm, 0, [&](MPI_Request* r) {
    return PMPI_Ineighbor_allgatherv(sendbuf,
                                     sendcount,
                                     sendtype,
                                     recvbuf,
                                     recvcounts,
                                     displs,
                                     recvtype,
                                     comm,
                                     r);
  }, [&] {
    return PMPI_Neighbor_allgatherv(sendbuf,
                                    sendcount,
                                    sendtype,
                                    recvbuf,
                                    recvcounts,
                                    displs,
                                    recvtype,
                                    comm);
  });
}

#if MPI_VERSION >= 4

int MPI_Neighbor_allgatherv_c(const void *sendbuf,
                              MPI_Count sendcount,
                              MPI_Datatype sendtype,
                              void *recvbuf,
                              const MPI_Count recvcounts[],
                              const MPI_Aint displs[],
                              MPI_Datatype recvtype,
                              MPI_Comm comm) {
  return blocking_collective(Call::Neighbor_allgatherv_c, comm, 0, [&](MPI_Request* r) {
    return PMPI_Ineighbor_allgatherv_c(sendbuf,
                                       sendcount,
                                       sendtype,
                                       recvbuf,
                                       recvcounts,
                                       displs,
                                       recvtype,
                                       comm,
                                       r);
  }, [&] {
    return PMPI_Neighbor_allgatherv_c(sendbuf,
                                      sendcount,
                                      sendtype,
                                      recvbuf,
                                      recvcounts,
                                      displs,
                                      recvtype,
                                      comm);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Ineighbor_allgatherv(const void *sendbuf,
                             int sendcount,
                             MPI_Datatype sendtype,
                             void *recvbuf,
                             const int recvcounts[],
                             const int displs[],
                             MPI_Datatype recvtype,
                             MPI_Comm comm,
                             MPI_Request *request) {
  return nonblocking_collective(Call::Ineighbor_allgatherv, comm, 0, request, false, [&] {
    return PMPI_Ineighbor_allgatherv(sendbuf,
                                     sendcount,
                                     sendtype,
                                     recvbuf,
                                     recvcounts,
                                     displs,
                                     recvtype,
                                     comm,
                                     request);
  });
}

#if MPI_VERSION >= 4

int MPI_Ineighbor_allgatherv_c(const void *sendbuf,
                               MPI_Count sendcount,
                               MPI_Datatype sendtype,
                               void *recvbuf,
                               const MPI_Count recvcounts[],
                               const MPI_Aint displs[],
                               MPI_Datatype recvtype,
                               MPI_Comm comm,
                               MPI_Request *request) {
  return nonblocking_collective(Call::Ineighbor_allgatherv_c, comm, 0, request, false, [&] {
    return PMPI_Ineighbor_allgatherv_c(sendbuf,
                                       sendcount,
                                       sendtype,
                                       recvbuf,
                                       recvcounts,
                                       displs,
                                       recvtype,
                                       comm,
                                       request);
  });
}

int MPI_Neighbor_allgatherv_init(const void *sendbuf,
                                 int sendcount,
                                 MPI_Datatype sendtype,
                                 void *recvbuf,
                                 const int recvcounts[],
                                 const int displs[],
                                 MPI_Datatype recvtype,
                                 MPI_Comm comm,
                                 MPI_Info info,
                                 MPI_Request *request) {
  return nonblocking_collective(Call::Neighbor_allgatherv_init, comm, 0, request, true, [&] {
    return PMPI_Neighbor_allgatherv_init(sendbuf,
                                         sendcount,
                                         sendtype,
                                         recvbuf,
                                         recvcounts,
                                         displs,
                                         recvtype,
                                         comm,
                                         info,
                                         request);
  });
}

int MPI_Neighbor_allgatherv_init_c(const void *sendbuf,
                                   MPI_Count sendcount,
                                   MPI_Datatype sendtype,
                                   void *recvbuf,
                                   const MPI_Count recvcounts[],
                                   const MPI_Aint displs[],
                                   MPI_Datatype recvtype,
                                   MPI_Comm comm,
                                   MPI_Info info,
                                   MPI_Request *request) {
  return nonblocking_collective(Call::Neighbor_allgatherv_init_c, comm, 0, request, true, [&] {
    return PMPI_Neighbor_allgatherv_init_c(sendbuf,
                                           sendcount,
                                           sendtype,
                                           recvbuf,
                                           recvcounts,
                                           displs,
                                           recvtype,
                                           comm,
                                           info,
                                           request);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Neighbor_alltoall(const void *sendbuf,
                          int sendcount,
                          MPI_Datatype sendtype,
                          void *recvbuf,
                          int recvcount,
                          MPI_Datatype recvtype,
                          MPI_Comm comm) {
  return blocking_collective(Call::Neighbor_alltoall, comm, 0, [&](MPI_Request* r) {
    return PMPI_Ineighbor_alltoall(sendbuf,
                                   sendcount,
                                   sendtype,
                                   recvbuf,
                                   recvcount,
                                   recvtype,
                                   comm,
                                   r);
  }, [&] {
    return PMPI_Neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  });
}

#if MPI_VERSION >= 4

int MPI_Neighbor_alltoall_c(const void *sendbuf,
                            MPI_Count sendcount,
                            MPI_Datatype sendtype,
                            void *recvbuf,
                            MPI_Count recvcount,
                            MPI_Datatype recvtype,
                            MPI_Comm comm) {
  return blocking_collective(Call::Neighbor_alltoall_c, comm, 0, [&](MPI_Request* r) {
    return PMPI_Ineighbor_alltoall_c(sendbuf,
                                     sendcount,
                                     sendtype,
                                     recvbuf,
                                     recvcount,
                                     recvtype,
                                     comm,
                                     r);
  }, [&] {
    return PMPI_Neighbor_alltoall_c(sendbuf,
                                    sendcount,
                                    sendtype,
                                    recvbuf,
                                    recvcount,
                                    recvtype,
                                    comm);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Ineighbor_alltoall(const void *sendbuf,
                           int sendcount,
                           MPI_Datatype sendtype,
                           void *recvbuf,
                           int recvcount,
                           MPI_Datatype recvtype,
                           MPI_Comm comm,
                           MPI_Request *request) {
  return nonblocking_collective(Call::Ineighbor_alltoall, comm, 0, request, false, [&] {
    return PMPI_Ineighbor_alltoall(sendbuf,
                                   sendcount,
                                   sendtype,
                                   recvbuf,
                                   recvcount,
                                   recvtype,
                                   comm,
                                   request);
  });
}

#if MPI_VERSION >= 4

int MPI_Ineighbor_alltoall_c(const void *sendbuf,
                             MPI_Count sendcount,
                             MPI_Datatype sendtype,
                             void *recvbuf,
                             MPI_Count recvcount,
                             MPI_Datatype recvtype,
                             MPI_Comm comm,
                             MPI_Request *request) {
  return nonblocking_collective(Call::Ineighbor_alltoall_c, comm, 0, request, false, [&] {
    return PMPI_Ineighbor_alltoall_c(sendbuf,
                                     sendcount,
                                     sendtype,
                                     recvbuf,
                                     recvcount,
                                     recvtype,
                                     comm,
                                     request);
  });
}

int MPI_Neighbor_alltoall_init(const void *sendbuf,
                               int sendcount,
                               MPI_Datatype sendtype,
                               void *recvbuf,
                               int recvcount,
                               MPI_Datatype recvtype,
                               MPI_Comm comm,
                               MPI_Info info,
                               MPI_Request *request) {
  return nonblocking_collective(Call::Neighbor_alltoall_init, comm, 0, request, true, [&] {
    return PMPI_Neighbor_alltoall_init(sendbuf,
                                       sendcount,
                                       sendtype,
                                       recvbuf,
                                       recvcount,
                                       recvtype,
                                       comm,
                                       info,
                                       request);
  });
}

int MPI_Neighbor_alltoall_init_c(const void *sendbuf,
                                 MPI_Count sendcount,
                                 MPI_Datatype sendtype,
                                 void *recvbuf,
                                 MPI_Count recvcount,
                                 MPI_Datatype recvtype,
                                 MPI_Comm comm,
                                 MPI_Info info,
                                 MPI_Request *request) {
  return nonblocking_collective(Call::Neighbor_alltoall_init_c, comm, 0, request, true, [&] {
    return PMPI_Neighbor_alltoall_init_c(sendbuf,
                                         sendcount,
                                         sendtype,
                                         recvbuf,
                                         recvcount,
                                         recvtype,
                                         comm,
                                         info,
                                         request);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Neighbor_alltoallv(const void *sendbuf,
                           const int sendcounts[],
                           const int sdispls[],
                           MPI_Datatype sendtype,
                           void *recvbuf,
                           const int recvcounts[],
                           const int rdispls[],
                           MPI_Datatype recvtype,
                           MPI_Comm comm) {
  return blocking_collective(Call::Neighbor_alltoallv, comm, 0, [&](MPI_Request* r) {
    return PMPI_Ineighbor_alltoallv(sendbuf,
                                    sendcounts,
                                    sdispls,
                                    sendtype,
                                    recvbuf,
                                    recvcounts,
                                    rdispls,
                                    recvtype,
                                    comm,
                                    r);
  }, [&] {
    return PMPI_Neighbor_alltoallv(sendbuf,
                                   sendcounts,
                                   sdispls,
                                   sendtype,
                                   recvbuf,
                                   recvcounts,
                                   rdispls,
                                   recvtype,
                                   comm);
  });
}

#if MPI_VERSION >= 4

int MPI_Neighbor_alltoallv_c(const void *sendbuf,
                             const MPI_Count sendcounts[],
                             const MPI_Aint sdispls[],
                             MPI_Datatype sendtype,
                             void *recvbuf,
                             const MPI_Count recvcounts[],
                             const MPI_Aint rdispls[],
                             MPI_Datatype recvtype,
                             MPI_Comm comm) {
  return blocking_collective(Call::Neighbor_alltoallv_c, comm, 0, [&](MPI_Request* r) {
    return PMPI_Ineighbor_alltoallv_c(sendbuf,
                                      sendcounts,
                                      sdispls,
                                      sendtype,
                                      recvbuf,
                                      recvcounts,
                                      rdispls,
                                      recvtype,
                                      comm,
                                      r);
  }, [&] {
    return PMPI_Neighbor_alltoallv_c(sendbuf,
                                     sendcounts,
                                     sdispls,
                                     sendtype,
                                     recvbuf,
                                     recvcounts,
                                     rdispls,
                                     recvtype,
                                     comm);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Ineighbor_alltoallv(const void *sendbuf,
                            const int sendcounts[],
                            const int sdispls[],
                            MPI_Datatype sendtype,
                            void *recvbuf,
                            const int recvcounts[],
                            const int rdispls[],
                            MPI_Datatype recvtype,
                            MPI_Comm comm,
                            MPI_Request *request) {
  return nonblocking_collective(Call::Ineighbor_alltoallv, comm, 0, request, false, [&] {
    return PMPI_Ineighbor_alltoallv(sendbuf,
                                    sendcounts,
                                    sdispls,
                                    sendtype,
                                    recvbuf,
                                    recvcounts,
                                    rdispls,
                                    recvtype,
                                    comm,
                                    request);
  });
}

#if MPI_VERSION >= 4

int MPI_Ineighbor_alltoallv_c(const void *sendbuf,
                              const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[],
                              MPI_Datatype sendtype,
                              void *recvbuf,
                              const MPI_Count recvcounts[],
                              const MPI_Aint rdispls[],
                              MPI_Datatype recvtype,
                              MPI_Comm comm,
                              MPI_Request *request) {
  return nonblocking_collective(Call::Ineighbor_alltoallv_c, comm, 0, request, false, [&] {
    return PMPI_Ineighbor_alltoallv_c(sendbuf,
                                      sendcounts,
                                      sdispls,
                                      sendtype,
                                      recvbuf,
                                      recvcounts,
                                      rdispls,
                                      recvtype,
                                      comm,
                                      request);
  });
}

int MPI_Neighbor_alltoallv_init(const void *sendbuf,
                                const int sendcounts[],
                                const int sdispls[],
                                MPI_Datatype sendtype,
                                void *recvbuf,
                                const int recvcounts[],
                                const int rdispls[],
                                MPI_Datatype recvtype,
                                MPI_Comm comm,
                                MPI_Info info,
                                MPI_Request *request) {
  return nonblocking_collective(Call::Neighbor_alltoallv_init, comm, 0, request, true, [&] {
    return PMPI_Neighbor_alltoallv_init(sendbuf,
                                        sendcounts,
                                        sdispls,
                                        sendtype,
                                        recvbuf,
                                        recvcounts,
                                        rdispls,
                                        recvtype,
                                        comm,
                                        info,
                                        request);
  });
}

int MPI_Neighbor_alltoallv_init_c(const void *sendbuf,
                                  const MPI_Count sendcounts[],
                                  const MPI_Aint sdispls[],
                                  MPI_Datatype sendtype,
                                  void *recvbuf,
                                  const MPI_Count recvcounts[],
                                  const MPI_Aint rdispls[],
                                  MPI_Datatype recvtype,
                                  MPI_Comm comm,
                                  MPI_Info info,
                                  MPI_Request *request) {
  return nonblocking_collective(Call::Neighbor_alltoallv_init_c, comm, 0, request, true, [&] {
    return PMPI_Neighbor_alltoallv_init_c(sendbuf,
                                          sendcounts,
                                          sdispls,
                                          sendtype,
                                          recvbuf,
                                          recvcounts,
                                          rdispls,
                                          recvtype,
                                          comm,
                                          info,
                                          request);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Neighbor_alltoallw(const void *sendbuf,
                           const int sendcounts[],
                           const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[],
                           void *recvbuf,
                           const int recvcounts[],
                           const MPI_Aint rdispls[],
                           const MPI_Datatype recvtypes[],
                           MPI_Comm comm) {
  return blocking_collective(Call::Neighbor_alltoallw, comm, 0, [&](MPI_Request* r) {
    return PMPI_Ineighbor_alltoallw(sendbuf,
                                    sendcounts,
                                    sdispls,
                                    sendtypes,
                                    recvbuf,
                                    recvcounts,
                                    rdispls,
                                    recvtypes,
                                    comm,
                                    r);
  }, [&] {
    return PMPI_Neighbor_alltoallw(sendbuf,
                                   sendcounts,
                                   sdispls,
                                   sendtypes,
                                   recvbuf,
                                   recvcounts,
                                   rdispls,
                                   recvtypes,
                                   comm);
  });
}

#if MPI_VERSION >= 4

int MPI_Neighbor_alltoallw_c(const void *sendbuf,
                             const MPI_Count sendcounts[],
                             const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[],
                             void *recvbuf,
                             const MPI_Count recvcounts[],
                             const MPI_Aint rdispls[],
                             const MPI_Datatype recvtypes[],
                             MPI_Comm comm) {
  return blocking_collective(Call::Neighbor_alltoallw_c, comm, 0, [&](MPI_Request* r) {
    return PMPI_Ineighbor_alltoallw_c(sendbuf,
                                      sendcounts,
                                      sdispls,
                                      sendtypes,
                                      recvbuf,
                                      recvcounts,
                                      rdispls,
                                      recvtypes,
                                      comm,
                                      r);
  }, [&] {
    return PMPI_Neighbor_alltoallw_c(sendbuf,
                                     sendcounts,
                                     sdispls,
                                     sendtypes,
                                     recvbuf,
                                     recvcounts,
                                     rdispls,
                                     recvtypes,
                                     comm);
  });
}

#endif  // MPI_VERSION >= 4

int MPI_Ineighbor_alltoallw(const void *sendbuf,
                            const int sendcounts[],
                            const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[],
                            void *recvbuf,
                            const int recvcounts[],
                            const MPI_Aint rdispls[],
                            const MPI_Datatype recvtypes[],
                            MPI_Comm comm,
                            MPI_Request *request) {
  return nonblocking_collective(Call::Ineighbor_alltoallw, comm, 0, request, false, [&] {
    return PMPI_Ineighbor_alltoallw(sendbuf,
                                    sendcounts,
                                    sdispls,
                                    sendtypes,
                                    recvbuf,
                                    recvcounts,
                                    rdispls,
                                    recvtypes,
                                    comm,
                                    request);
  });
}

#if MPI_VERSION >= 4

int MPI_Ineighbor_alltoallw_c(const void *sendbuf,
                              const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[],
                              const MPI_Datatype sendtypes[],
                              void *recvbuf,
                              const MPI_Count recvcounts[],
                              const MPI_Aint rdispls[],
                              const MPI_Datatype recvtypes[],
                              MPI_Comm comm,
                              MPI_Request *request) {
  return nonblocking_collective(Call::Ineighbor_alltoallw_c, comm, 0, request, false, [&] {
    return PMPI_Ineighbor_alltoallw_c(sendbuf,
                                      sendcounts,
                                      sdispls,
                                      sendtypes,
                                      recvbuf,
                                      recvcounts,
                                      rdispls,
                                      recvtypes,
                                      comm,
                                      request);
  });
}

int MPI_Neighbor_alltoallw_init(const void *sendbuf,
                                const int sendcounts[],
                                const MPI_Aint sdispls[],
                                const MPI_Datatype sendtypes[],
                                void *recvbuf,
                                const int recvcounts[],
                                const MPI_Aint rdispls[],
                                const MPI_Datatype recvtypes[],
                                MPI_Comm comm,
                                MPI_Info info,
                                MPI_Request *request) {
  return nonblocking_collective(Call::Neighbor_alltoallw_init, comm, 0, request, true, [&] {
    return PMPI_Neighbor_alltoallw_init(sendbuf,
                                        sendcounts,
                                        sdispls,
                                        sendtypes,
                                        recvbuf,
                                        recvcounts,
                                        rdispls,
                                        recvtypes,
                                        comm,
                                        info,
                                        request);
  });
}

int MPI_Neighbor_alltoallw_init_c(const void *sendbuf,
                                  const MPI_Count sendcounts[],
                                  const MPI_Aint sdispls[],
                                  const MPI_Datatype sendtypes[],
                                  void *recvbuf,
                                  const MPI_Count recvcounts[],
                                  const MPI_Aint rdispls[],
                                  const MPI_Datatype recvtypes[],
                                  MPI_Comm comm,
                                  MPI_Info info,
                                  MPI_Request *request) {
  return nonblocking_collective(Call::Neighbor_alltoallw_init_c, comm, 0, request, true, [&] {
    return PMPI_Neighbor_alltoallw_init_c(sendbuf,
                                          sendcounts,
                                          sdispls,
                                          sendtypes,
                                          recvbuf,
                                          recvcounts,
                                          rdispls,
                                          recvtypes,
                                          comm,
                                          info,
                                          request);
  });
}

#endif  // MPI_VERSION >= 4

}  // extern "C"
