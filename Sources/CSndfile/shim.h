#ifndef LOCKSTEP_CSNDFILE_SHIM_H
#define LOCKSTEP_CSNDFILE_SHIM_H
#include <sndfile.h>
#endif
