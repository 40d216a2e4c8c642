import CJack
import Foundation
import Lockstep
import Synchronization

/// The monitor thread: xruns, graph changes and shutdowns reported off the realtime thread.
extension JACKDevice {
    func startMonitor() {
        guard monitor == nil else { return }
        let thread = Thread { [weak self] in
            while let self {
                // Announce the poll, then check for a stop (detach sets the stop, then waits for
                // the announcement to clear): a poll never runs after detach returned.
                self.monitorPolling.store(true, ordering: .sequentiallyConsistent)
                if self.monitorStop.load(ordering: .sequentiallyConsistent) {
                    self.monitorPolling.store(false, ordering: .sequentiallyConsistent)
                    break
                }
                self.poll()
                self.monitorPolling.store(false, ordering: .sequentiallyConsistent)
                // Woken by JACK's latency and shutdown callbacks and by detach; it also looks
                // every 250 ms, and every 20 ms while a server restart is awaited or connections
                // wait to be restored.
                let busy = self.realtime.pointee.isShutDown.load(ordering: .acquiring)
                    || !self.control.withLock { $0.pendingConnections.isEmpty }
                let wake = self.realtime.pointee.monitorWake
                _ = wake.wait(timeout: .now() + .milliseconds(busy ? 20 : 250))
            }
        }
        thread.name = "lockstep.jack-monitor"
        monitor = thread
        thread.start()
    }

    /// Handles a server shutdown, a latency change and connections to restore (everything else
    /// JACK's callbacks record is reported by the process thread, on its sample).
    func poll() {
        guard let renderer = realtime.pointee.renderer else { return }
        let rt = realtime
        if rt.pointee.portsRegistered.exchange(false, ordering: .acquiringAndReleasing) && isRunning {
            // A port appeared or went away: measure (a destination that is gone is noted), then
            // the connections the device made that are missing (their other port went away, as a
            // netjack2 slave's do when the master gives it up) are made again, to the port's
            // successor where it came back under another name.
            updateLatencies()
            control.withLock { state in
                let missing = state.wanted.filter { !state.connections.contains($0) }
                guard !missing.isEmpty else { return }
                state.pendingConnections = missing
                state.restoreDeadline = Date().addingTimeInterval(1)
            }
        }
        if rt.pointee.latencyDirty.load(ordering: .acquiring) && isRunning { updateLatencies() }
        resolveMarks()
        if !control.withLock({ $0.pendingConnections.isEmpty }) {
            restoreConnections()
            updateLatencies()
        }
        if rt.pointee.isShutDown.load(ordering: .sequentiallyConsistent) && options.survivesServerRestart
            && !control.withLock({ $0.closed }) {
            waitForServer(renderer)
            return
        }
        if rt.pointee.isShutDown.load(ordering: .sequentiallyConsistent) {
            let first = control.withLock { state -> Bool in
                defer { state.shutdownHandled = true }
                return !state.shutdownHandled
            }
            guard first else { return }
            while rt.pointee.inRender.load(ordering: .sequentiallyConsistent) { usleep(100) }
            let reason = String(cString: rt.pointee.shutdownReason)
            let period = Int64(max(1, rt.pointee.periodFrames.load(ordering: .acquiring)))
            let last = max(0, rt.pointee.cycleStart.load(ordering: .acquiring)) + period
            renderer.deviceStopped(at: last, error: AudioQueueError(.invalidDevice,
                "the JACK server went away" + (reason.isEmpty ? "" : " (\(reason))") + "; restart it and play again"))
        }
    }
}
