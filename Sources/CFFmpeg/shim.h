// FFmpeg's demuxers, muxers and codecs (libavformat, libavcodec, libavutil) for the compressed
// formats of AudioQueueCompat, plus the error codes FFmpeg spells as macros Swift cannot import.
#ifndef LOCKSTEP_CFFMPEG_SHIM_H
#define LOCKSTEP_CFFMPEG_SHIM_H
#include <errno.h>
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/error.h>
#include <libavutil/log.h>
#include <libavutil/mem.h>
#include <libavutil/opt.h>

/// AVERROR(EAGAIN): the codec wants input (or output taken) first.
static inline int lockstep_averror_again(void) { return AVERROR(EAGAIN); }
/// AVERROR_EOF: the end of the stream.
static inline int lockstep_averror_eof(void) { return AVERROR_EOF; }
/// AVERROR(ENOMEM).
static inline int lockstep_averror_nomem(void) { return AVERROR(ENOMEM); }
#endif
