import CJack
import Foundation
import Lockstep
import Synchronization

/// The device side of the engine: rates, attaching, starting and stopping, the render helper.
extension JACKDevice {
    /// The server's sample rate.
    public var sampleRate: Double { Double(realtime.pointee.sampleRate.load(ordering: .acquiring)) }
    /// The server's current period (frames per process cycle).
    public var periodFrames: Int { realtime.pointee.bufferSize.load(ordering: .acquiring) }
    /// Always false: JACK renders from its own realtime thread.
    public var isOffline: Bool { false }
    /// The engine's callback thread, woken by the process callback after every cycle.
    public var callbackDelivery: CallbackDelivery { .callbackThread }
    /// Whether the client is active and the server is there.
    public var isRunning: Bool {
        control.withLock { $0.active } && !realtime.pointee.isShutDown.load(ordering: .acquiring)
    }
    /// Whether the server went away.
    public var serverWentAway: Bool { realtime.pointee.isShutDown.load(ordering: .acquiring) }

    /// How long the JACK process callback took, cycle by cycle, since the device opened.
    public struct CallbackTimes: Sendable, Hashable {
        /// Callbacks measured.
        public var cycles: Int
        /// The median callback, in seconds (to the 25 µs step it is counted in).
        public var median: Double
        /// The 99th percentile, in seconds (to 25 µs).
        public var p99: Double
        /// The longest callback, in seconds (to the microsecond).
        public var longest: Double
        /// Callbacks that took longer than their period (each one an xrun of this client's own
        /// making, or a stall of the machine while it ran).
        public var overPeriod: Int
    }

    /// The process callback's durations so far: how much of each period the engine's render
    /// takes, and how far its slowest cycles come from the deadline. Counted on the process
    /// thread (two clock reads and a counter a cycle); read from any thread.
    public var callbackTimes: CallbackTimes {
        let state = realtime
        let buckets = JACKRealtimeState.callbackBuckets, width = JACKRealtimeState.callbackBucketMicroseconds
        var counts = [Int](repeating: 0, count: buckets)
        for i in 0..<buckets { counts[i] = Int(state.pointee.callbackHistogram[i].load(ordering: .relaxed)) }
        let total = counts.reduce(0, +)
        let longest = state.pointee.callbackLongest.load(ordering: .relaxed)
        func percentile(_ p: Double) -> Double {
            guard total > 0 else { return 0 }
            let rank = Int((Double(total) * p).rounded(.up))
            var seen = 0
            for (i, count) in counts.enumerated() {
                seen += count
                if seen >= rank { return Double(min((i + 1) * width, max(longest, i * width))) / 1e6 }
            }
            return Double(longest) / 1e6
        }
        return CallbackTimes(cycles: total, median: percentile(0.5), p99: percentile(0.99), longest: Double(longest) / 1e6,
                             overPeriod: state.pointee.callbackOverPeriod.load(ordering: .relaxed))
    }

    /// Called by the engine.
    public func attach(_ renderer: DeviceRenderer) throws(AudioQueueError) {
        let already = control.withLock { state -> Bool in
            defer { state.attached = true }
            return state.attached
        }
        if already { throw AudioQueueError(.invalidDevice, "JACK device '\(name)' already belongs to an engine") }
        realtime.pointee.renderer = renderer
        startRenderHelper(renderer)
    }

    /// Whether the engine of this device has a helper thread sharing its render cycles (an engine
    /// of more than 256 queues, a server running realtime, a second core): see
    /// ``DeviceRenderer/runRenderHelper()``.
    public var hasRenderHelper: Bool { control.withLock { $0.renderHelper != nil } }

    /// Starts the engine's render helper: a thread JACK creates at the client's realtime
    /// priority (`jack_client_create_thread`), when the options allow it
    /// (``Options/usesRenderHelper``), the engine can share its cycles, the server
    /// runs realtime and the machine has a second core online. Without realtime scheduling there
    /// is no helper: the process thread would spin on a thread ordinary ones may preempt.
    func startRenderHelper(_ renderer: DeviceRenderer) {
        guard options.usesRenderHelper, renderer.canShareRendering, sysconf(Int32(_SC_NPROCESSORS_ONLN)) >= 2 else { return }
        let context = UnsafeMutablePointer<DeviceRenderer>.allocate(capacity: 1)
        context.initialize(to: renderer)
        let started = withClient { client -> jack_native_thread_t? in
            guard jack_is_realtime(client) == 1 else { return nil }
            let priority = jack_client_real_time_priority(client)
            guard priority > 0 else { return nil }
            var thread = jack_native_thread_t()
            guard jack_client_create_thread(client, &thread, priority, 1, Self.renderHelperMain, context) == 0 else { return nil }
            return thread
        } ?? nil
        guard let started else {
            context.deinitialize(count: 1)
            context.deallocate()
            return
        }
        control.withLock { $0.renderHelper = (started, context) }
    }

    /// Ends the render helper and joins its thread (after the process callback has stopped).
    func stopRenderHelper() {
        guard let helper = control.withLock({ state -> (thread: jack_native_thread_t, renderer: UnsafeMutablePointer<DeviceRenderer>)? in
            defer { state.renderHelper = nil }
            return state.renderHelper
        }) else { return }
        helper.renderer.pointee.stopRenderHelper()
        pthread_join(helper.thread, nil)
        helper.renderer.deinitialize(count: 1)
        helper.renderer.deallocate()
    }

    /// The render helper thread's body (a C function: JACK starts it).
    static let renderHelperMain: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { context in
        context?.assumingMemoryBound(to: DeviceRenderer.self).pointee.runRenderHelper()
        return nil
    }

    /// Activates the client (JACK starts calling the process callback), connects the master
    /// outputs to the physical playback ports if the options say so, and starts the monitor.
    public func start() throws(AudioQueueError) {
        let error: AudioQueueError? = control.withLock { state in
            if state.closed { return AudioQueueError(.invalidDevice, "JACK client '\(name)' is closed") }
            if state.active { return nil }
            if realtime.pointee.isShutDown.load(ordering: .acquiring) {
                return AudioQueueError(.cannotStart, "the JACK server went away; restart it and create a new device")
            }
            // A client that ran before keeps its mapping: the time it was inactive passed.
            if realtime.pointee.started { realtime.pointee.resync.store(true, ordering: .releasing) }
            guard withClient({ jack_activate($0) }) == 0 else {
                return AudioQueueError(.cannotStart, "cannot activate JACK client '\(name)'; check the server")
            }
            state.active = true
            return nil
        }
        if let error { throw error }
        updateLatencies()
        startMonitor()
        // Wait for the first process cycle, so the clock (and every start time computed from it)
        // comes from JACK's cycles, not from an estimate made before the graph ran.
        let deadline = Date().addingTimeInterval(2)
        while realtime.pointee.cycleStart.load(ordering: .acquiring) < 0 && Date() < deadline
                && !realtime.pointee.isShutDown.load(ordering: .acquiring) {
            usleep(1000)
        }
        if options.connectToPhysicalOutputs { connectToPhysicalOutputs() }
        updateLatencies()
    }

    /// Deactivates the client (the process callback stops). Idempotent.
    public func stop() {
        control.withLock { state in
            guard state.active, !state.closed else { return }
            if !realtime.pointee.isShutDown.load(ordering: .acquiring) { _ = withClient { jack_deactivate($0) } }
            state.active = false
        }
    }

    /// Deactivates and closes the client; the device cannot be used afterwards.
    public func detach() {
        monitorStop.store(true, ordering: .sequentiallyConsistent)
        realtime.pointee.monitorWake.signal()
        if Thread.current.name != "lockstep.jack-monitor" {
            while monitorPolling.load(ordering: .sequentiallyConsistent) { usleep(200) }
        }
        stop()
        stopRenderHelper()
        control.withLock { state in
            guard !state.closed else { return }
            state.closed = true
            realtime.pointee.renderer = nil
            live.withLock { live in
                if let client = live.client {
                    if realtime.pointee.isShutDown.load(ordering: .acquiring) { Self.closeDeadClient(client) } else { jack_client_close(client) }
                }
                live.client = nil
            }
        }
    }

    /// Closes a client whose server has gone away, waiting at most 2 s. libjack's close of such a
    /// client can block for ever on a lock its own (dead) client thread holds; the close then
    /// goes on on a thread of its own and the client's memory is abandoned rather than the
    /// program hanging.
    static func closeDeadClient(_ client: OpaquePointer) {
        final class Closing: @unchecked Sendable {
            let client: OpaquePointer
            let done = DispatchSemaphore(value: 0)
            init(_ client: OpaquePointer) { self.client = client }
        }
        let closing = Closing(client)
        let thread = Thread {
            jack_client_close(closing.client)
            closing.done.signal()
        }
        thread.name = "lockstep.jack-close"
        thread.start()
        _ = closing.done.wait(timeout: .now() + 2)
    }
}
