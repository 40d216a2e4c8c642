#include "cjack.h"
#include <stddef.h>

jack_client_t *lockstep_jack_client_open(const char *client_name, const char *server_name,
                                         int no_start_server, jack_status_t *status) {
    jack_options_t options = JackNullOption;
    if (no_start_server) options |= JackNoStartServer;
    if (server_name != NULL) {
        options |= JackServerName;
        return jack_client_open(client_name, options, status, server_name);
    }
    return jack_client_open(client_name, options, status);
}
