#pragma once
// The MPI team (team/mpi_team.cpp, built where find_package(MPI) found a library): the only file that
// includes mpi.h.
#include <memory>
#include <string>

#include "team/team.hpp"

namespace dmabench::team {

// MPI_Init_thread (funneled: only the main thread calls MPI) and the world communicator as a Team.
std::unique_ptr<Team> start_mpi();
// MPI_Finalize when `clean` (every process reached the same point), otherwise nothing.
void finish_mpi(bool clean);
// MPI_Get_library_version up to its first comma, e.g. "Open MPI v4.1.4".
std::string mpi_library_version();

}  // namespace dmabench::team
