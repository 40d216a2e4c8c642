#ifndef LOCKSTEP_CTINFO_SHIM_H
#define LOCKSTEP_CTINFO_SHIM_H
// terminfo (ncurses' libtinfo): what the terminal named by TERM can do, and the strings that do
// it. The corresponding C functions are setupterm, tigetstr, tigetnum and tiparm; the wrappers
// turn their sentinel values into plain ones and hide tiparm's variadic signature.
#include <curses.h>
#include <term.h>

/// Loads the terminfo entry of `term` for the terminal on `fd`: 0 when loaded, -1 when `term` has
/// no entry (or the database is missing), -2 when it is a hardcopy terminal.
static inline int lockstep_setupterm(const char *term, int fd) {
    int error = 0;
    if (setupterm((char *)term, fd, &error) == OK) return 0;
    return error == 1 ? -2 : -1;
}

/// The string capability `name` (e.g. "cuu", "ed", "cr"), or NULL when the terminal lacks it.
static inline const char *lockstep_tigetstr(const char *name) {
    char *value = tigetstr((char *)name);
    return (value == NULL || value == (char *)-1) ? NULL : value;
}

/// The numeric capability `name` (e.g. "cols"), or -1 when the terminal lacks it.
static inline int lockstep_tigetnum(const char *name) {
    int value = tigetnum((char *)name);
    return value < 0 ? -1 : value;
}

/// `capability` with its one parameter filled in (e.g. "cuu" with a line count), or NULL.
static inline const char *lockstep_tiparm1(const char *capability, int parameter) {
    return tiparm(capability, parameter);
}
#endif
