import Foundation
import Lockstep

/// An error of the compatibility layer: an `OSStatus` (which may be outside
/// ``AudioQueueError/Code``, such as ``kAudio_ParamError``) and what to do about it.
struct CompatError: Error {
    var status: OSStatus
    var message: String

    init(_ status: OSStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    init(_ error: AudioQueueError) {
        self.init(error.osStatus, error.message)
    }

    init(_ code: AudioQueueError.Code, _ message: String) {
        self.init(code.rawValue, message)
    }
}

/// Runs `body` and turns its outcome into an `OSStatus`, recording the message of a failure.
func status(_ body: () throws(CompatError) -> Void) -> OSStatus {
    do {
        try body()
        return noErr
    } catch {
        return fail(error.status, error.message)
    }
}

/// Converts the core's error into the compatibility layer's.
@inline(__always)
func core<R>(_ body: () throws(AudioQueueError) -> R) throws(CompatError) -> R {
    do { return try body() } catch { throw CompatError(error) }
}

/// Whether the current thread is inside a callback this layer delivers (output, input or
/// property listener), so synchronous waits for the callback thread must not happen.
enum CallbackThread {
    nonisolated(unsafe) private static var key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    static var isCurrent: Bool { pthread_getspecific(key) != nil }

    /// Runs `body` marked as a callback.
    static func run(_ body: () -> Void) {
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1))
        body()
        pthread_setspecific(key, previous)
    }
}
