import AudioQueueCompat
import Foundation
import Synchronization

// The Core Foundation pieces of the C API (include/CoreFoundation/CoreFoundation.h): strings, file
// URLs and run loops, exported under `LockstepCF…` names that the header maps Apple's names to
// (libFoundation exports CoreFoundation's own CFRelease, CFRunLoopRun, … : ours must not
// interpose on them). A C reference (CFStringRef, CFURLRef, CFRunLoopRef) is the address of a
// Swift object: ``CFString``, ``FileURL`` or ``CFRunLoop``.

/// The object behind a C `CFURLRef`: a file URL. (Swift code uses Foundation's `URL`, which is a
/// struct and so has no address to hand to C.)
final class FileURL: Sendable {
    /// The URL.
    let url: URL
    /// Wraps a URL.
    init(_ url: URL) { self.url = url }
}

/// Objects C code must never free: constant strings (CFSTR, the run loop modes) and run loops.
private let immortal = Mutex<Set<UInt>>([])
/// CFSTR's strings, one per text.
private let constantStrings = Mutex<[String: CFString]>([:])

/// The C reference to `object`, not retained.
func cfReference(_ object: AnyObject) -> OpaquePointer {
    OpaquePointer(Unmanaged.passUnretained(object).toOpaque())
}

/// The C reference to `object`, retained for a caller that releases it (Apple's Create rule).
func cfCreated(_ object: AnyObject) -> OpaquePointer {
    OpaquePointer(Unmanaged.passRetained(object).toOpaque())
}

/// The C reference to an object that lives as long as the process, not retained.
func cfImmortal(_ object: AnyObject) -> OpaquePointer {
    let reference = cfReference(object)
    _ = immortal.withLock { $0.insert(UInt(bitPattern: reference)) }
    return reference
}

/// The object of class `T` behind a C reference, or nil for NULL or an object of another class.
func cfObject<T: AnyObject>(_ reference: OpaquePointer?, as type: T.Type) -> T? {
    guard let reference else { return nil }
    return Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(reference)).takeUnretainedValue() as? T
}

/// C's `CFRetain` (`<CoreFoundation/CoreFoundation.h>` maps Apple's name to this symbol); documented there.
@_cdecl("LockstepCFRetain")
public func LockstepCFRetain(_ cf: OpaquePointer?) -> OpaquePointer? {
    guard let cf, !immortal.withLock({ $0.contains(UInt(bitPattern: cf)) }) else { return cf }
    _ = Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(cf)).retain()
    return cf
}

/// C's `CFRelease` (`<CoreFoundation/CoreFoundation.h>` maps Apple's name to this symbol); documented there.
@_cdecl("LockstepCFRelease")
public func LockstepCFRelease(_ cf: OpaquePointer?) {
    guard let cf, !immortal.withLock({ $0.contains(UInt(bitPattern: cf)) }) else { return }
    Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(cf)).release()
}

// MARK: Strings

private let kCFStringEncodingUTF8: UInt32 = 0x0800_0100
private let kCFStringEncodingASCII: UInt32 = 0x0600

/// C's `CFSTR` (`<CoreFoundation/CoreFoundation.h>` maps Apple's name to this symbol); documented there.
@_cdecl("LockstepCFSTR")
public func LockstepCFSTR(_ cStr: UnsafePointer<CChar>?) -> OpaquePointer? {
    guard let cStr else { return nil }
    let text = String(cString: cStr)
    let string = constantStrings.withLock { strings in
        if let string = strings[text] { return string }
        let string = CFString(text)
        strings[text] = string
        return string
    }
    return cfImmortal(string)
}

/// C's `CFStringCreateWithCString` (`<CoreFoundation/CoreFoundation.h>` maps Apple's name to this symbol); documented there.
@_cdecl("LockstepCFStringCreateWithCString")
public func LockstepCFStringCreateWithCString(_ alloc: OpaquePointer?, _ cStr: UnsafePointer<CChar>?, _ encoding: UInt32) -> OpaquePointer? {
    guard let cStr, encoding == kCFStringEncodingUTF8 || encoding == kCFStringEncodingASCII else { return nil }
    let bytes = UnsafeRawBufferPointer(start: cStr, count: strlen(cStr))
    if encoding == kCFStringEncodingASCII, bytes.contains(where: { $0 >= 128 }) { return nil }
    guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
    return cfCreated(CFString(text))
}

/// C's `CFStringGetCString` (`<CoreFoundation/CoreFoundation.h>` maps Apple's name to this symbol); documented there.
@_cdecl("LockstepCFStringGetCString")
public func LockstepCFStringGetCString(_ theString: OpaquePointer?, _ buffer: UnsafeMutablePointer<CChar>?, _ bufferSize: Int,
                                _ encoding: UInt32) -> UInt8 {
    guard let string = cfObject(theString, as: CFString.self), let buffer,
          encoding == kCFStringEncodingUTF8 || encoding == kCFStringEncodingASCII else { return 0 }
    let bytes = Array(string.string.utf8)
    if encoding == kCFStringEncodingASCII, bytes.contains(where: { $0 >= 128 }) { return 0 }
    guard bytes.count < bufferSize else { return 0 }
    bytes.withUnsafeBufferPointer { UnsafeMutableRawPointer(buffer).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    buffer[bytes.count] = 0
    return 1
}

/// C's `CFStringGetLength` (`<CoreFoundation/CoreFoundation.h>` maps Apple's name to this symbol); documented there.
@_cdecl("LockstepCFStringGetLength")
public func LockstepCFStringGetLength(_ theString: OpaquePointer?) -> Int {
    cfObject(theString, as: CFString.self)?.string.utf16.count ?? 0
}

// MARK: URLs

/// C's `CFURLCreateFromFileSystemRepresentation` (`<CoreFoundation/CoreFoundation.h>` maps Apple's name to this symbol); documented there.
@_cdecl("LockstepCFURLCreateFromFileSystemRepresentation")
public func LockstepCFURLCreateFromFileSystemRepresentation(_ allocator: OpaquePointer?, _ buffer: UnsafePointer<UInt8>?,
                                                     _ bufLen: Int, _ isDirectory: UInt8) -> OpaquePointer? {
    guard let url = CFURLCreateFromFileSystemRepresentation(nil, buffer, bufLen, isDirectory != 0) else { return nil }
    return cfCreated(FileURL(url))
}

/// C's `CFURLCreateWithFileSystemPath` (`<CoreFoundation/CoreFoundation.h>` maps Apple's name to this symbol); documented there.
@_cdecl("LockstepCFURLCreateWithFileSystemPath")
public func LockstepCFURLCreateWithFileSystemPath(_ allocator: OpaquePointer?, _ filePath: OpaquePointer?, _ pathStyle: Int,
                                           _ isDirectory: UInt8) -> OpaquePointer? {
    guard let path = cfObject(filePath, as: CFString.self), pathStyle == 0 else { return nil }
    return cfCreated(FileURL(URL(fileURLWithPath: path.string, isDirectory: isDirectory != 0)))
}

/// C's `CFURLGetFileSystemRepresentation` (`<CoreFoundation/CoreFoundation.h>` maps Apple's name to this symbol); documented there.
@_cdecl("LockstepCFURLGetFileSystemRepresentation")
public func LockstepCFURLGetFileSystemRepresentation(_ url: OpaquePointer?, _ resolveAgainstBase: UInt8,
                                              _ buffer: UnsafeMutablePointer<UInt8>?, _ maxBufLen: Int) -> UInt8 {
    guard let url = cfObject(url, as: FileURL.self), let buffer else { return 0 }
    let bytes = Array(url.url.path.utf8)
    guard bytes.count < maxBufLen else { return 0 }
    buffer.update(from: bytes, count: bytes.count)
    buffer[bytes.count] = 0
    return 1
}

// MARK: Run loops

/// C's `CFRunLoopDefaultMode` (`<CoreFoundation/CoreFoundation.h>` maps Apple's name to this symbol); documented there.
@_cdecl("LockstepCFRunLoopDefaultMode")
public func LockstepCFRunLoopDefaultMode() -> OpaquePointer { cfImmortal(kCFRunLoopDefaultMode) }

/// C's `CFRunLoopCommonModes` (`<CoreFoundation/CoreFoundation.h>` maps Apple's name to this symbol); documented there.
@_cdecl("LockstepCFRunLoopCommonModes")
public func LockstepCFRunLoopCommonModes() -> OpaquePointer { cfImmortal(kCFRunLoopCommonModes) }

/// C's `CFRunLoopGetCurrent` (`<CoreFoundation/CoreFoundation.h>` maps Apple's name to this symbol); documented there.
@_cdecl("LockstepCFRunLoopGetCurrent")
public func LockstepCFRunLoopGetCurrent() -> OpaquePointer { cfReference(CFRunLoopGetCurrent()) }

/// C's `CFRunLoopGetMain` (`<CoreFoundation/CoreFoundation.h>` maps Apple's name to this symbol); documented there.
@_cdecl("LockstepCFRunLoopGetMain")
public func LockstepCFRunLoopGetMain() -> OpaquePointer { cfReference(CFRunLoopGetMain()) }

/// C's `CFRunLoopRun` (`<CoreFoundation/CoreFoundation.h>` maps Apple's name to this symbol); documented there.
@_cdecl("LockstepCFRunLoopRun")
public func LockstepCFRunLoopRun() { CFRunLoopRun() }

/// C's `CFRunLoopRunInMode` (`<CoreFoundation/CoreFoundation.h>` maps Apple's name to this symbol); documented there.
@_cdecl("LockstepCFRunLoopRunInMode")
public func LockstepCFRunLoopRunInMode(_ mode: OpaquePointer?, _ seconds: Double, _ returnAfterSourceHandled: UInt8) -> Int32 {
    CFRunLoopRunInMode(cfObject(mode, as: CFString.self), seconds, returnAfterSourceHandled != 0)
}

/// C's `CFRunLoopStop` (`<CoreFoundation/CoreFoundation.h>` maps Apple's name to this symbol); documented there.
@_cdecl("LockstepCFRunLoopStop")
public func LockstepCFRunLoopStop(_ rl: OpaquePointer?) {
    if let loop = cfObject(rl, as: CFRunLoop.self) { CFRunLoopStop(loop) }
}

/// C's `CFRunLoopWakeUp` (`<CoreFoundation/CoreFoundation.h>` maps Apple's name to this symbol); documented there.
@_cdecl("LockstepCFRunLoopWakeUp")
public func LockstepCFRunLoopWakeUp(_ rl: OpaquePointer?) {
    if let loop = cfObject(rl, as: CFRunLoop.self) { CFRunLoopWakeUp(loop) }
}
