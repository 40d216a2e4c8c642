import Foundation
import Lockstep

/// What happens to the outputs' destinations during a run: a port an output was connected to
/// that goes away (the ports of a netjack2 slave the master gave up), the output connected again
/// when it (or its successor) comes back, and every change of an output's latency or delay — each
/// on the sample time of the first process cycle after the monitor thread re-measured.
extension JACKDevice {
    /// Starts recording, from the outputs' present measurement (``outputCompensation``), every
    /// outage of a destination connected through ``connect(_:to:)`` and every change of an
    /// output's playback latency or delay. `play` and `session run` call it once their outputs
    /// are connected. Any thread; calling it again starts over.
    public func beginOutputHistory() {
        control.withLock { state in
            state.recordsHistory = true
            state.history = Dictionary(state.compensation.map { ($0.port, PortHistory(latency: $0.latency, delay: $0.delay)) },
                                       uniquingKeysWith: { a, _ in a })
        }
    }

    /// `outputs` (as ``outputCompensation`` gave them) with each port's `outages` and `changes`
    /// since ``beginOutputHistory()``. An outage that is not over counts its frames up to `end`
    /// (a device sample time: the end of the run). Any thread.
    public func withOutputHistory(_ outputs: [OutputCompensation], until end: Int64) -> [OutputCompensation] {
        resolveMarks()
        return control.withLock { state in
            func time(_ stamp: PortHistory.Stamp) -> Int64 { state.markTimes[stamp.mark] ?? stamp.noticed }
            return outputs.map { output in
                var output = output
                guard let history = state.history[output.port] else { return output }
                output.outages = history.outages.map { outage in
                    let lost = time(outage.lost)
                    let back = outage.rejoined.map(time)
                    let slave = JACKGraph.isNetSlavePort(outage.destination)
                        ? JACKGraph.announcedSlaveName(ofClient: String(outage.destination.prefix { $0 != ":" })) : nil
                    return OutputOutage(destination: outage.destination, netSlave: slave, lostSampleTime: lost, rejoinedSampleTime: back,
                                        rejoinedAs: outage.rejoinedAs, frames: max(0, (back ?? end) - lost))
                }
                output.changes = history.changes.map {
                    OutputLatencyChange(sampleTime: time($0.at), latency: $0.latency, delay: $0.delay)
                }
                return output
            }
        }
    }

    /// Notes, after a measurement, the connections made through ``connect(_:to:)`` from output
    /// ports that are missing (an outage begins: JACK disconnects a client's ports as it goes) or
    /// back (it ends), and every output whose latency or delay changed; sets one mark for all of
    /// them and for the measurement's delay changes and latencies (after the delays were set), so
    /// the process thread reports the delay change on the sample it stamps on the history's.
    func recordHistory(compensation: [OutputCompensation], connections: [Connection], latencies: (playback: Int, capture: Int),
                       playbackDelaysChanged: Bool, captureDelaysChanged: Bool) {
        let noticed = currentTime().sampleTime
        let name = self.name
        control.withLock { state in
            let pending = -1
            var changed = false
            if playbackDelaysChanged { state.playbackDelayGeneration = (state.playbackDelayGeneration + 1) & 0x7FFF_FFFF }
            if captureDelaysChanged { state.captureDelayGeneration = (state.captureDelayGeneration + 1) & 0xFFFF_FFFF }
            let delaysOrLatencies = playbackDelaysChanged || captureDelaysChanged || state.publishedLatencies != latencies
            for wanted in state.wanted where wanted.oursIsOutput && state.recordsHistory {
                let port = "\(name):\(wanted.ours)"
                var history = state.history[port] ?? PortHistory(latency: nil, delay: 0)
                let present = connections.contains(wanted)
                if let open = history.outages.lastIndex(where: { $0.rejoined == nil && $0.following == wanted.other }) {
                    guard present else { continue }
                    history.outages[open].rejoined = PortHistory.Stamp(mark: pending, noticed: noticed)
                    history.outages[open].rejoinedAs = wanted.other
                } else if !present {
                    history.outages.append(.init(destination: wanted.other, following: wanted.other,
                                                 lost: PortHistory.Stamp(mark: pending, noticed: noticed)))
                } else {
                    continue
                }
                state.history[port] = history
                changed = true
            }
            for output in compensation where state.recordsHistory {
                var history = state.history[output.port] ?? PortHistory(latency: output.latency, delay: output.delay)
                if history.latency != output.latency || history.delay != output.delay {
                    history.changes.append(.init(at: PortHistory.Stamp(mark: pending, noticed: noticed),
                                                 latency: output.latency, delay: output.delay))
                    history.latency = output.latency
                    history.delay = output.delay
                    changed = true
                }
                state.history[output.port] = history
            }
            guard changed || delaysOrLatencies else { return }
            // One mark for this measurement, set after its delays: the process thread stamps it
            // on the cycle that reports them.
            let rt = realtime
            let mark = rt.pointee.markGeneration.load(ordering: .relaxed) + 1
            let slot = mark & (JACKRealtimeState.markSlots - 1)
            rt.pointee.markDelayGenerations[slot].store(state.playbackDelayGeneration << 32 | state.captureDelayGeneration,
                                                        ordering: .relaxed)
            rt.pointee.markLatencies[slot].store(min(latencies.playback, 0x7FFF_FFFF) << 32 | min(latencies.capture, 0xFFFF_FFFF),
                                                 ordering: .relaxed)
            state.publishedLatencies = latencies
            rt.pointee.markGeneration.store(mark, ordering: .releasing)
            for (port, var history) in state.history {
                for i in history.outages.indices {
                    if history.outages[i].lost.mark == pending { history.outages[i].lost.mark = mark }
                    if history.outages[i].rejoined?.mark == pending { history.outages[i].rejoined?.mark = mark }
                }
                for i in history.changes.indices where history.changes[i].at.mark == pending {
                    history.changes[i].at.mark = mark
                }
                state.history[port] = history
            }
        }
    }

    /// Copies the sample times the process thread stamped on the marks set since the last call.
    func resolveMarks() {
        let rt = realtime
        let stamped = rt.pointee.stampedMark.load(ordering: .acquiring)
        control.withLock { state in
            guard stamped > state.resolvedMark else { return }
            let slots = JACKRealtimeState.markSlots
            for mark in max(state.resolvedMark + 1, stamped - slots + 1)...stamped {
                state.markTimes[mark] = rt.pointee.markTimes[mark & (slots - 1)].load(ordering: .relaxed)
            }
            state.resolvedMark = stamped
        }
    }
}
