#ifndef LOCKSTEP_CJACK_H
#define LOCKSTEP_CJACK_H

#include <jack/jack.h>
#include <jack/transport.h>
#include <jack/types.h>
#include <jack/statistics.h>
#include <jack/midiport.h>
#include <jack/thread.h>

/// Opens a JACK client. Wraps the variadic jack_client_open, which Swift cannot call.
/// server_name may be NULL (then JACK_DEFAULT_SERVER or "default" is used);
/// no_start_server non-zero passes JackNoStartServer. status may be NULL.
jack_client_t *lockstep_jack_client_open(const char *client_name, const char *server_name,
                                         int no_start_server, jack_status_t *status);

#endif
