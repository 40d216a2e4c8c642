#ifndef LOCKSTEP_CLO_SHIM_H
#define LOCKSTEP_CLO_SHIM_H
#include <lo/lo.h>
#include <lo/lo_throw.h>
#endif
