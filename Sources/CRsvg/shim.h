#ifndef LOCKSTEP_CRSVG_SHIM_H
#define LOCKSTEP_CRSVG_SHIM_H
// librsvg (GNOME's SVG renderer) and cairo, seen from Swift as one function: an SVG document
// rendered to PNG bytes written to a file descriptor. Keeping the GLib types on this side of the
// shim means Swift never handles a GError or a GObject reference.
#include <librsvg/rsvg.h>
#include <cairo.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static cairo_status_t lockstep_png_write(void *closure, const unsigned char *data, unsigned int length) {
    int fd = *(int *)closure;
    while (length > 0) {
        ssize_t written = write(fd, data, length);
        if (written < 0) {
            if (errno == EINTR) continue;
            return CAIRO_STATUS_WRITE_ERROR;
        }
        data += written;
        length -= (unsigned int)written;
    }
    return CAIRO_STATUS_SUCCESS;
}

/// Renders the SVG document `svg` (`length` bytes) at `scale` times its own size on an opaque white
/// background and writes it as PNG to `fd`. Returns 0, or -1 with a sentence in `message`.
static inline int lockstep_svg_to_png(const char *svg, size_t length, double scale, int fd,
                                      int *width, int *height, char *message, size_t capacity) {
    GError *error = NULL;
    RsvgHandle *handle = rsvg_handle_new_from_data((const guint8 *)svg, length, &error);
    if (!handle) {
        snprintf(message, capacity, "librsvg cannot read the picture: %s", error ? error->message : "unknown error");
        if (error) g_error_free(error);
        return -1;
    }
    gdouble w = 0, h = 0;
    if (!rsvg_handle_get_intrinsic_size_in_pixels(handle, &w, &h) || w <= 0 || h <= 0) {
        snprintf(message, capacity, "the picture has no size in pixels");
        g_object_unref(handle);
        return -1;
    }
    int pw = (int)(w * scale + 0.5), ph = (int)(h * scale + 0.5);
    cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, pw, ph);
    cairo_t *cr = cairo_create(surface);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    RsvgRectangle viewport = { 0, 0, pw, ph };
    int result = 0;
    if (!rsvg_handle_render_document(handle, cr, &viewport, &error)) {
        snprintf(message, capacity, "librsvg cannot draw the picture: %s", error ? error->message : "unknown error");
        if (error) g_error_free(error);
        result = -1;
    }
    cairo_destroy(cr);
    if (result == 0) {
        cairo_status_t status = cairo_surface_write_to_png_stream(surface, lockstep_png_write, &fd);
        if (status != CAIRO_STATUS_SUCCESS) {
            snprintf(message, capacity, "cannot write the PNG: %s", cairo_status_to_string(status));
            result = -1;
        }
    }
    cairo_surface_destroy(surface);
    g_object_unref(handle);
    *width = pw;
    *height = ph;
    return result;
}

/// The colour of pixel (`x`, `y`) of the PNG file at `path` as 0xRRGGBB, or -1 when the file cannot
/// be read as PNG or the pixel is outside it (for checking what was drawn).
static inline long lockstep_png_pixel(const char *path, int x, int y) {
    cairo_surface_t *surface = cairo_image_surface_create_from_png(path);
    long result = -1;
    if (cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS
        && x >= 0 && y >= 0 && x < cairo_image_surface_get_width(surface) && y < cairo_image_surface_get_height(surface)) {
        cairo_surface_flush(surface);
        const unsigned char *row = cairo_image_surface_get_data(surface) + (size_t)y * (size_t)cairo_image_surface_get_stride(surface);
        uint32_t pixel = ((const uint32_t *)row)[x];
        result = (long)(pixel & 0xFFFFFF);
    }
    cairo_surface_destroy(surface);
    return result;
}
#endif
