import Foundation

// Core Foundation's run loop, as far as Audio Queue Services use it: one per thread, work posted
// to it by other threads (the queues' callbacks), run while its thread is inside CFRunLoopRun or
// CFRunLoopRunInMode, stopped by CFRunLoopStop. Swift's and C's run loop functions are this one.

/// A thread's run loop: a queue of posted work that its thread runs while inside
/// ``CFRunLoopRun()`` or ``CFRunLoopRunInMode(_:_:_:)-(CFString?,_,_)``. The corresponding Apple
/// type is `CFRunLoop`.
///
/// Audio queues created with a run loop, from Swift or C (`AudioQueueNewOutput(…, CFRunLoopGetCurrent(),
/// kCFRunLoopCommonModes, …)`), post their callbacks and property listeners here: they run on the
/// run loop's thread, one at a time, in the order the queue delivered them. The engine's callback
/// thread posts them (never the realtime thread) and does not wait for them to run. Each such
/// queue is a *source* of the run loop in its mode until it is disposed of.
///
/// Modes: work posted in ``kCFRunLoopCommonModes`` runs in the default mode; work posted in
/// another mode runs only while the loop runs in that mode.
public final class CFRunLoop: @unchecked Sendable {
    // @unchecked Sendable: every field is guarded by `condition`.
    private struct Item {
        let mode: String
        let work: () -> Void
    }

    private let condition = NSCondition()
    private var items: [Item] = []
    private var stopped = false
    /// Sources (queues posting here) by mode name.
    private var sources: [String: Int] = [:]
    /// How many runs of this loop are active (nested runs count each).
    private var activeRuns = 0

    fileprivate init() {}

    private static let common = kCFRunLoopCommonModes.string
    private static let defaultName = kCFRunLoopDefaultMode.string

    /// Whether work or a source of `itemMode` belongs to a run in `runMode`.
    private static func matches(_ itemMode: String, _ runMode: String) -> Bool {
        itemMode == runMode || (itemMode == common && runMode == defaultName)
    }

    /// Posts `work` to run on this run loop's thread the next time it runs in `mode` (any thread).
    func perform(mode: CFString?, _ work: @escaping () -> Void) {
        condition.lock()
        items.append(Item(mode: mode?.string ?? Self.common, work: work))
        condition.broadcast()
        condition.unlock()
    }

    /// Registers a source (a queue that posts callbacks here) in `mode`.
    func addSource(mode: CFString?) {
        condition.lock()
        sources[mode?.string ?? Self.common, default: 0] += 1
        condition.unlock()
    }

    /// Removes a source added by ``addSource(mode:)``; a loop left without sources finishes.
    func removeSource(mode: CFString?) {
        condition.lock()
        let name = mode?.string ?? Self.common
        if let count = sources[name] { sources[name] = count > 1 ? count - 1 : nil }
        condition.broadcast()
        condition.unlock()
    }

    /// Runs the loop in `mode`: Apple's `CFRunLoopRunInMode`. `untilFinished` is `CFRunLoopRun`:
    /// no timeout, but it returns ``kCFRunLoopRunFinished`` once the mode has no sources and no
    /// posted work.
    func run(mode: String, seconds: Double, returnAfterSourceHandled: Bool, untilFinished: Bool) -> Int32 {
        let runMode = mode == Self.common ? Self.defaultName : mode
        let deadline = Date(timeIntervalSinceNow: seconds.isFinite ? max(0, seconds) : 1e9)
        condition.lock()
        activeRuns += 1
        defer {
            activeRuns -= 1
            condition.unlock()
        }
        while true {
            if stopped {
                stopped = false
                return kCFRunLoopRunStopped
            }
            if let index = items.firstIndex(where: { Self.matches($0.mode, runMode) }) {
                let item = items.remove(at: index)
                condition.unlock()
                item.work()
                condition.lock()
                if returnAfterSourceHandled { return kCFRunLoopRunHandledSource }
                continue
            }
            if untilFinished, !sources.keys.contains(where: { Self.matches($0, runMode) }) {
                return kCFRunLoopRunFinished
            }
            if Date() >= deadline { return kCFRunLoopRunTimedOut }
            _ = condition.wait(until: deadline)
        }
    }

    /// Makes the innermost run of the loop return ``kCFRunLoopRunStopped`` (or the next run, if
    /// none is active).
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    /// Wakes the loop's thread if it waits.
    func wakeUp() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    // MARK: Per-thread run loops

    /// The main thread's run loop, made on first use from any thread.
    fileprivate static let main = CFRunLoop()

    nonisolated(unsafe) private static var key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<CFRunLoop>.fromOpaque(pointer).release() }
        }
        return key
    }()

    /// The calling thread's run loop, made on first use and released when the thread ends.
    fileprivate static var current: CFRunLoop {
        if Thread.isMainThread { return main }
        if let pointer = pthread_getspecific(key) { return Unmanaged<CFRunLoop>.fromOpaque(pointer).takeUnretainedValue() }
        let loop = CFRunLoop()
        pthread_setspecific(key, Unmanaged.passRetained(loop).toOpaque())
        return loop
    }
}

/// The run loop ran out of sources (and posted work) in the mode. The corresponding Apple
/// constant is `kCFRunLoopRunFinished` (1).
public let kCFRunLoopRunFinished: Int32 = 1
/// ``CFRunLoopStop(_:)`` stopped the run. The corresponding Apple constant is `kCFRunLoopRunStopped` (2).
public let kCFRunLoopRunStopped: Int32 = 2
/// The time ran out. The corresponding Apple constant is `kCFRunLoopRunTimedOut` (3).
public let kCFRunLoopRunTimedOut: Int32 = 3
/// One piece of work (a callback) ran and the caller asked to return after one. The corresponding
/// Apple constant is `kCFRunLoopRunHandledSource` (4).
public let kCFRunLoopRunHandledSource: Int32 = 4

/// The calling thread's run loop (made on first use). The corresponding Apple function is
/// `CFRunLoopGetCurrent`.
public func CFRunLoopGetCurrent() -> CFRunLoop { CFRunLoop.current }

/// The main thread's run loop. The corresponding Apple function is `CFRunLoopGetMain`.
public func CFRunLoopGetMain() -> CFRunLoop { CFRunLoop.main }

/// Runs the calling thread's run loop in `mode` for at most `seconds`, running the callbacks
/// posted to it; returns ``kCFRunLoopRunHandledSource`` after the first when
/// `returnAfterSourceHandled`, ``kCFRunLoopRunStopped`` after ``CFRunLoopStop(_:)``, else
/// ``kCFRunLoopRunTimedOut``. The corresponding Apple function is `CFRunLoopRunInMode`.
///
/// Differs from Apple in one case: a mode without sources waits out `seconds` (returning
/// ``kCFRunLoopRunTimedOut``) instead of returning ``kCFRunLoopRunFinished`` at once, so the
/// `while running { CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0.25, false) }` loops of ported
/// code whose queues deliver on their own thread wait instead of spinning.
@discardableResult
public func CFRunLoopRunInMode(_ mode: CFString?, _ seconds: Double, _ returnAfterSourceHandled: Bool) -> Int32 {
    CFRunLoop.current.run(mode: mode?.string ?? kCFRunLoopDefaultMode.string, seconds: seconds,
                          returnAfterSourceHandled: returnAfterSourceHandled, untilFinished: false)
}

/// ``CFRunLoopRunInMode(_:_:_:)-(CFString?,_,_)`` in the spelling Apple's Swift SDK imports:
/// `CFRunLoopRunInMode(.defaultMode, 0.25, false)`.
@discardableResult
public func CFRunLoopRunInMode(_ mode: CFRunLoopMode?, _ seconds: Double, _ returnAfterSourceHandled: Bool) -> Int32 {
    CFRunLoopRunInMode(mode?.rawValue, seconds, returnAfterSourceHandled)
}

/// Runs the calling thread's run loop in the default mode until ``CFRunLoopStop(_:)`` stops it
/// or it has no sources left (every queue posting to it disposed of). The corresponding Apple
/// function is `CFRunLoopRun`.
public func CFRunLoopRun() {
    _ = CFRunLoop.current.run(mode: kCFRunLoopDefaultMode.string, seconds: .infinity,
                              returnAfterSourceHandled: false, untilFinished: true)
}

/// Stops the innermost active run of `rl` (from any thread, or a callback on it). The
/// corresponding Apple function is `CFRunLoopStop`.
public func CFRunLoopStop(_ rl: CFRunLoop) { rl.stop() }

/// Wakes `rl`'s thread if it waits. The corresponding Apple function is `CFRunLoopWakeUp`.
public func CFRunLoopWakeUp(_ rl: CFRunLoop) { rl.wakeUp() }
