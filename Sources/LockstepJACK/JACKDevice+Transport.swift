import CJack
import CRealtime
import Foundation
import Lockstep
import Synchronization

/// JACK transport and realtime scheduling of other threads.
extension JACKDevice {
    /// JACK transport as seen at the start of a process cycle.
    public struct TransportSnapshot: Sendable, Hashable {
        /// Whether transport is rolling (or starting), as opposed to stopped.
        public var isRolling: Bool
        /// Whether it is starting (`JackTransportStarting`): asked to roll, waiting for slow-sync
        /// clients; its frame does not move until it rolls.
        public var isStarting: Bool = false
        /// The transport frame at the start of the cycle.
        public var frame: Int64
        /// The device sample time of the start of that cycle.
        public var sampleTime: Int64
        /// The period of that cycle.
        public var period: Int
    }

    /// The transport state and position at the start of the latest process cycle, with that
    /// cycle's device sample time, read consistently; nil before the first cycle.
    public func transportSnapshot() -> TransportSnapshot? {
        let rt = realtime
        let (start, state, frame, period) = rt.pointee.clockLock.read {
            (rt.pointee.cycleStart.load(ordering: .relaxed), rt.pointee.transportState.load(ordering: .relaxed),
             rt.pointee.transportFrame.load(ordering: .relaxed), rt.pointee.periodFrames.load(ordering: .relaxed))
        }
        if start < 0 { return nil }
        let rolling = state == JackTransportRolling.rawValue || state == JackTransportStarting.rawValue
        return TransportSnapshot(isRolling: rolling, isStarting: state == JackTransportStarting.rawValue, frame: Int64(frame),
                                 sampleTime: start, period: period)
    }

    /// Whether the engine renders only while JACK transport rolls: while it is stopped the outputs
    /// are silent and no queue time passes (every queue holds where it is, as if paused). Off by
    /// default. `lockstep play --transport` turns it on.
    public var rendersOnlyWhileTransportRolls: Bool {
        get { realtime.pointee.transportGate.load(ordering: .relaxed) }
        set { realtime.pointee.transportGate.store(newValue, ordering: .relaxed) }
    }

    /// Starts JACK transport rolling (`jack_transport_start`).
    public func startTransport() { _ = withClient { jack_transport_start($0) } }
    /// Stops JACK transport (`jack_transport_stop`).
    public func stopTransport() { _ = withClient { jack_transport_stop($0) } }
    /// Moves JACK transport to `frame` (`jack_transport_locate`).
    public func locateTransport(to frame: Int64) {
        _ = withClient { jack_transport_locate($0, jack_nframes_t(clamping: max(0, frame))) }
    }

    /// Gives the calling thread realtime scheduling (JACK's `jack_acquire_real_time_scheduling`)
    /// at `below` steps under the client's own realtime priority: for a thread that must act
    /// within a period of being woken by the process thread, such as the reader of
    /// ``midiInput`` whose commands land two periods after their event. It still may allocate
    /// and lock; it only runs before ordinary threads. The threads it starts from then on (a
    /// dispatch queue's or Swift's executors' workers, started when it hands them work) start as
    /// ordinary threads instead of inheriting the priority: among 4096 layers, the web page's
    /// meters, computed on a worker a promoted thread had started, ran at realtime priority and
    /// starved the layers' streamer threads (hundreds of layers underran at once).
    /// - Returns: whether the priority was granted (not on a server without realtime scheduling,
    ///   or without the rights to it: the thread then runs on as before).
    @discardableResult
    public func promoteCurrentThread(below: Int32 = 10) -> Bool {
        withClient { client -> Bool in
            let priority = jack_client_real_time_priority(client)
            guard priority > 0 else { return false }
            guard jack_acquire_real_time_scheduling(pthread_self(), max(1, priority - below)) == 0 else { return false }
            _ = lockstep_reset_scheduling_on_fork()
            return true
        } ?? false
    }
}
