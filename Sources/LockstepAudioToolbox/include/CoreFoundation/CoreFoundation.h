// Lockstep's C API: the pieces of Apple's Core Foundation (and MacTypes.h) that Audio Queue
// Services code uses — the scalar types, result codes, run loops, strings and file URLs.
//
// The CF functions are Lockstep's own: each name is a macro for a `LockstepCF…` symbol, because
// swift-corelibs-foundation's libFoundation.so (which liblockstep-audiotoolbox links) exports
// CoreFoundation symbols of the same names (CFRelease, CFRunLoopRun, …). Source code spells them
// as on Apple; object code never interposes on Foundation's. A CF object here (CFStringRef,
// CFURLRef, CFRunLoopRef) is one of Lockstep's objects: pass it only to these functions.
#ifndef LOCKSTEP_COREFOUNDATION_H
#define LOCKSTEP_COREFOUNDATION_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

/// Defined by Lockstep's headers: `#ifdef LOCKSTEP_AUDIOTOOLBOX` guards Linux additions such as
/// AudioQueueCompatLastErrorMessage().
#define LOCKSTEP_AUDIOTOOLBOX 1

#ifdef __cplusplus
#define LOCKSTEP_EXTERN_C_BEGIN extern "C" {
#define LOCKSTEP_EXTERN_C_END }
#else
#define LOCKSTEP_EXTERN_C_BEGIN
#define LOCKSTEP_EXTERN_C_END
#endif

LOCKSTEP_EXTERN_C_BEGIN

// MARK: MacTypes

#ifndef __MACTYPES__
#define __MACTYPES__
/// Unsigned 8-bit integer.
typedef uint8_t UInt8;
/// Signed 8-bit integer.
typedef int8_t SInt8;
/// Unsigned 16-bit integer.
typedef uint16_t UInt16;
/// Signed 16-bit integer.
typedef int16_t SInt16;
/// Unsigned 32-bit integer.
typedef uint32_t UInt32;
/// Signed 32-bit integer.
typedef int32_t SInt32;
/// Unsigned 64-bit integer.
typedef uint64_t UInt64;
/// Signed 64-bit integer.
typedef int64_t SInt64;
/// 32-bit IEEE float.
typedef float Float32;
/// 64-bit IEEE float.
typedef double Float64;
/// Apple's one-byte Boolean: 0 is false, anything else true.
typedef unsigned char Boolean;
/// A result code: noErr (0) for success.
typedef SInt32 OSStatus;
/// A four-character code such as 'lpcm', packed big-endian into a UInt32.
typedef UInt32 FourCharCode;
/// A four-character type code.
typedef FourCharCode OSType;
/// Success.
enum { noErr = 0 };
#ifndef TRUE
#define TRUE 1
#endif
#ifndef FALSE
#define FALSE 0
#endif
#endif

// MARK: CFBase

/// A signed index or count (CFIndex is a signed long on Apple's 64-bit platforms too).
typedef long CFIndex;
/// Seconds, as a double.
typedef double CFTimeInterval;
/// Any Lockstep CF object (string, URL, run loop).
typedef const void *CFTypeRef;
/// An immutable string.
typedef const struct __CFString *CFStringRef;
/// A mutable string (only as a type: no function here makes one).
typedef struct __CFString *CFMutableStringRef;
/// A file URL.
typedef const struct __CFURL *CFURLRef;
/// A thread's run loop.
typedef struct __CFRunLoop *CFRunLoopRef;
/// An allocator: pass NULL or kCFAllocatorDefault (the only one there is).
typedef const struct __CFAllocator *CFAllocatorRef;
/// A run loop mode: a string such as kCFRunLoopDefaultMode.
typedef CFStringRef CFRunLoopMode;
/// A string encoding (kCFStringEncodingUTF8, …).
typedef UInt32 CFStringEncoding;
/// How a path is spelled (kCFURLPOSIXPathStyle only).
typedef CFIndex CFURLPathStyle;

/// The default allocator (NULL).
#define kCFAllocatorDefault ((CFAllocatorRef)NULL)

/// Adds a reference to a CF object; returns it. (Lockstep's; see the note at the top.)
CFTypeRef LockstepCFRetain(CFTypeRef cf);
/// Drops a reference to a CF object made by a Create or Copy function; constant strings
/// (CFSTR, the run loop modes) and run loops returned by CFRunLoopGet… are never freed.
void LockstepCFRelease(CFTypeRef cf);
#define CFRetain LockstepCFRetain
#define CFRelease LockstepCFRelease

// MARK: Strings

/// UTF-8.
enum { kCFStringEncodingUTF8 = 0x08000100, kCFStringEncodingASCII = 0x0600 };

/// The string for a C string literal, made once per distinct text and never freed (as Apple's
/// constant strings). CFSTR("…") here is a function call: it is not a constant expression, so it
/// cannot initialize a variable of static storage in C (inside functions it works everywhere).
CFStringRef LockstepCFSTR(const char *cStr);
#define CFSTR(cStr) LockstepCFSTR("" cStr "")

/// A new string from a NUL-terminated C string in `encoding` (UTF-8 or ASCII); NULL for another
/// encoding or bytes that are not valid in it. Release it with CFRelease.
CFStringRef LockstepCFStringCreateWithCString(CFAllocatorRef alloc, const char *cStr, CFStringEncoding encoding);
#define CFStringCreateWithCString LockstepCFStringCreateWithCString
/// Copies the string as a NUL-terminated C string into `buffer` (`bufferSize` bytes, the NUL
/// included); false if it does not fit or the encoding is not UTF-8 or ASCII (or the text is not ASCII).
Boolean LockstepCFStringGetCString(CFStringRef theString, char *buffer, CFIndex bufferSize, CFStringEncoding encoding);
#define CFStringGetCString LockstepCFStringGetCString
/// The length in UTF-16 code units, as on Apple.
CFIndex LockstepCFStringGetLength(CFStringRef theString);
#define CFStringGetLength LockstepCFStringGetLength

// MARK: URLs

/// POSIX paths ("/tmp/take.aif").
enum { kCFURLPOSIXPathStyle = 0 };

/// A file URL from a path of `bufLen` bytes (not NUL-terminated necessarily); NULL when `buffer`
/// is NULL. Release it with CFRelease.
CFURLRef LockstepCFURLCreateFromFileSystemRepresentation(CFAllocatorRef allocator, const UInt8 *buffer, CFIndex bufLen,
                                                         Boolean isDirectory);
#define CFURLCreateFromFileSystemRepresentation LockstepCFURLCreateFromFileSystemRepresentation
/// A file URL from a path string (kCFURLPOSIXPathStyle; other styles give NULL). Relative paths
/// are taken from the current directory. Release it with CFRelease.
CFURLRef LockstepCFURLCreateWithFileSystemPath(CFAllocatorRef allocator, CFStringRef filePath, CFURLPathStyle pathStyle,
                                               Boolean isDirectory);
#define CFURLCreateWithFileSystemPath LockstepCFURLCreateWithFileSystemPath
/// Writes the URL's path, NUL-terminated, into `buffer` (`maxBufLen` bytes); false if it does not fit.
Boolean LockstepCFURLGetFileSystemRepresentation(CFURLRef url, Boolean resolveAgainstBase, UInt8 *buffer, CFIndex maxBufLen);
#define CFURLGetFileSystemRepresentation LockstepCFURLGetFileSystemRepresentation

// MARK: Run loops

/// What CFRunLoopRunInMode returns.
typedef SInt32 CFRunLoopRunResult;
enum {
    /// The run loop ran out of sources (and posted work) in the mode.
    kCFRunLoopRunFinished = 1,
    /// CFRunLoopStop stopped the run.
    kCFRunLoopRunStopped = 2,
    /// The time ran out.
    kCFRunLoopRunTimedOut = 3,
    /// One piece of work (a callback) ran and the caller asked to return after one.
    kCFRunLoopRunHandledSource = 4,
};

/// The default mode.
CFStringRef LockstepCFRunLoopDefaultMode(void);
/// The common modes: work posted in them runs in the default mode.
CFStringRef LockstepCFRunLoopCommonModes(void);
#define kCFRunLoopDefaultMode (LockstepCFRunLoopDefaultMode())
#define kCFRunLoopCommonModes (LockstepCFRunLoopCommonModes())

/// The calling thread's run loop (made on first use; not to be released).
CFRunLoopRef LockstepCFRunLoopGetCurrent(void);
#define CFRunLoopGetCurrent LockstepCFRunLoopGetCurrent
/// The main thread's run loop (not to be released).
CFRunLoopRef LockstepCFRunLoopGetMain(void);
#define CFRunLoopGetMain LockstepCFRunLoopGetMain
/// Runs the calling thread's run loop in the default mode — running the audio queue callbacks
/// posted to it — until CFRunLoopStop or until it has no sources (every queue created with it
/// disposed of).
void LockstepCFRunLoopRun(void);
#define CFRunLoopRun LockstepCFRunLoopRun
/// Runs the calling thread's run loop in `mode` for at most `seconds`. Returns
/// kCFRunLoopRunHandledSource after the first callback when `returnAfterSourceHandled`,
/// kCFRunLoopRunStopped after CFRunLoopStop, else kCFRunLoopRunTimedOut. Unlike Apple, a mode
/// with no sources waits out `seconds` rather than returning kCFRunLoopRunFinished at once.
CFRunLoopRunResult LockstepCFRunLoopRunInMode(CFRunLoopMode mode, CFTimeInterval seconds, Boolean returnAfterSourceHandled);
#define CFRunLoopRunInMode LockstepCFRunLoopRunInMode
/// Stops the innermost run of `rl` (from any thread, or from a callback running on it).
void LockstepCFRunLoopStop(CFRunLoopRef rl);
#define CFRunLoopStop LockstepCFRunLoopStop
/// Wakes `rl`'s thread if it waits.
void LockstepCFRunLoopWakeUp(CFRunLoopRef rl);
#define CFRunLoopWakeUp LockstepCFRunLoopWakeUp

LOCKSTEP_EXTERN_C_END

#endif
