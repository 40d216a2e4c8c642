import Foundation
import Lockstep

// The compatibility layer throws the core's ``AudioQueueError``: its ``AudioQueueError/Code`` holds
// any `OSStatus`, so the codes of Apple's other services (`kAudio_ParamError`, the Audio File
// errors) travel in it unchanged.

/// Runs `body` and turns its outcome into an `OSStatus`, recording the message of a failure.
func status(_ body: () throws(AudioQueueError) -> Void) -> OSStatus {
    do {
        try body()
        return noErr
    } catch {
        return fail(error.osStatus, error.message)
    }
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
