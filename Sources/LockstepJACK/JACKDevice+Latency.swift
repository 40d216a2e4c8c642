import CJack
import Foundation
import Lockstep
import Synchronization

/// Port latencies and output alignment.
extension JACKDevice {
    /// A port's latency from JACK's latency API, in frames.
    public struct PortLatency: Sendable, Hashable {
        /// How long ago the audio arriving at the port entered the graph (from a capture device).
        public var capture: ClosedRange<Int>
        /// How long until audio leaving the port reaches a playback device.
        public var playback: ClosedRange<Int>
    }

    /// The capture and playback latency of `portName` (`jack_port_get_latency_range`), or nil for
    /// an unknown port. To align a recording made while playing, shift it by the playback latency
    /// of what you played plus the capture latency of what you recorded.
    public func latency(ofPort portName: String) -> PortLatency? {
        withClient { client -> PortLatency? in
            guard let port = jack_port_by_name(client, portName) else { return nil }
            var capture = jack_latency_range_t()
            var playback = jack_latency_range_t()
            jack_port_get_latency_range(port, JackCaptureLatency, &capture)
            jack_port_get_latency_range(port, JackPlaybackLatency, &playback)
            return PortLatency(capture: Int(capture.min)...Int(max(capture.min, capture.max)),
                               playback: Int(playback.min)...Int(max(playback.min, playback.max)))
        } ?? nil
    }

    /// The compensated capture latency in frames: how long before the device time at which an
    /// input frame is captured it was heard at its source (the largest capture latency of the
    /// ports connected to the inputs; the others are delayed to match). 0 without inputs, with
    /// nothing connected, or with ``Options/compensatesCaptureLatency`` off.
    public var captureLatency: Int { realtime.pointee.captureLatency.load(ordering: .acquiring) }

    /// The playback latency in frames from the device time at which a frame is rendered to the
    /// moment it is heard at the far end of the connected outputs: the largest playback latency
    /// of the connected outputs. With ``Options/compensatesPlaybackLatency`` on, every output
    /// reaches its far end after exactly this long; with it off, outputs of smaller latency are
    /// heard earlier.
    public var playbackLatency: Int { realtime.pointee.playbackLatency.load(ordering: .acquiring) }

    /// The delay in frames applied to each master output (`out_1…`) for playback compensation.
    public var outputDelays: [Int] {
        guard let bank = realtime.pointee.outputDelays else { return Array(repeating: 0, count: channelCount) }
        return (0..<channelCount).map { bank.pointee.delay(channel: $0) }
    }

    /// Every output port (master, then per-queue) with its connections, playback latency and the
    /// compensation delay it applies, as measured when JACK last announced a latency change (or
    /// ports were connected through the device). Any thread.
    public var outputCompensation: [OutputCompensation] { control.withLock { $0.compensation } }

    /// The spread of the connected outputs' playback latencies in frames (largest − smallest): how
    /// far apart their far ends hear one rendered frame without compensation. 0 with one port
    /// connected or all alike.
    public var playbackLatencySpread: Int { realtime.pointee.playbackLatencySpread.load(ordering: .acquiring) }

    /// The delay in frames applied to each input (`in_1…`) for capture alignment.
    public var inputDelays: [Int] {
        guard let bank = realtime.pointee.inputDelays else { return Array(repeating: 0, count: inputChannelCount) }
        return (0..<inputChannelCount).map { bank.pointee.delay(channel: $0) }
    }

    /// The largest latency range (in `mode`) of the ports connected to `port`, or nil when
    /// nothing is connected.
    func connectedLatency(of port: OpaquePointer, mode: jack_latency_callback_mode_t, client: OpaquePointer) -> Int? {
        guard let connections = jack_port_get_all_connections(client, port) else { return nil }
        defer { jack_free(UnsafeMutableRawPointer(connections)) }
        var largest: Int?
        var i = 0
        while let name = connections[i] {
            if let other = jack_port_by_name(client, name) {
                var range = jack_latency_range_t()
                jack_port_get_latency_range(other, mode, &range)
                largest = max(largest ?? 0, Int(max(range.min, range.max)))
            }
            i += 1
        }
        return largest
    }

    /// Re-reads the latencies of everything connected to the device's ports and sets the
    /// compensation delays (monitor thread, `start()`, after port changes).
    /// One output port of the device (a master output or a per-queue output) with its delay line.
    typealias PlaybackOutput = (port: OpaquePointer, bank: UnsafeMutablePointer<JACKDelayBank>?, channel: Int, name: String)

    /// Every output port of the device: master outputs, then per-queue outputs in order.
    func playbackOutputs() -> [PlaybackOutput] {
        var outputs: [PlaybackOutput] = []
        for c in 0..<channelCount {
            if let port = realtime.pointee.ports[c] { outputs.append((port, realtime.pointee.outputDelays, c, outputPortNames[c])) }
        }
        let records = control.withLock { $0.directRecords.values.sorted { $0.index < $1.index }.map { ($0.record, $0.names) } }
        for (record, names) in records {
            for c in 0..<record.pointee.channelCount {
                if let port = record.pointee.ports[c] { outputs.append((port, record.pointee.delays, c, c < names.count ? names[c] : "")) }
            }
        }
        return outputs
    }

    /// Sets, before output connections are made again, the delays the outputs will need once they
    /// are: each output's latency as it is measured now, or, where one of `destinations` (full
    /// port names, by our output's short name) is about to be connected, as large as that port's
    /// playback latency. The first frame that reaches a returning destination is then on its
    /// sample (connected first, the output would go out for a cycle or more with the delay it had
    /// while it had nowhere to go). Published and reported by the measurement after the
    /// connections (``updateLatencies()``), which finds the same values. Monitor thread, with
    /// the client.
    func presetDelays(for destinations: [String: [String]], outputs: [PlaybackOutput], client: OpaquePointer) {
        let predicted = outputs.map { output -> Int? in
            let short = output.name.split(separator: ":", maxSplits: 1).last.map(String.init) ?? output.name
            var latency = connectedLatency(of: output.port, mode: JackPlaybackLatency, client: client)
            for name in destinations[short] ?? [] {
                guard let other = jack_port_by_name(client, name) else { continue }
                var range = jack_latency_range_t()
                jack_port_get_latency_range(other, JackPlaybackLatency, &range)
                latency = max(latency ?? 0, Int(max(range.min, range.max)))
            }
            return latency
        }
        let alignment = JACKGraph.alignmentDelays(predicted)
        for (i, output) in outputs.enumerated() {
            output.bank?.pointee.setDelay(alignment.delays[i], channel: output.channel)
        }
    }

    func updateLatencies() {
        let closed = control.withLock { $0.closed }
        guard !closed, !serverWentAway else { return }
        realtime.pointee.latencyDirty.store(false, ordering: .releasing)
        // Playback: master outputs and per-queue outputs.
        let outputs = playbackOutputs()
        let handles = outputs.map { PortHandle(pointer: $0.port) }
        let inputs = (0..<inputChannelCount).map { realtime.pointee.inputPorts[$0].map(PortHandle.init) }
        let midi = realtime.pointee.midiPort.map { [(PortHandle(pointer: $0), false)] } ?? []
        let all = handles.map { ($0, true) } + inputs.compactMap { $0.map { ($0, false) } } + midi
        guard let measured = withClient({ client -> Measured in
            Measured(playback: handles.map { self.connectedLatency(of: $0.pointer, mode: JackPlaybackLatency, client: client) },
                     capture: inputs.map { $0.flatMap { self.connectedLatency(of: $0.pointer, mode: JackCaptureLatency, client: client) } },
                     connections: Self.connections(of: all, client: client))
        }) else { return }
        let playback = measured.playback
        let alignment = JACKGraph.alignmentDelays(playback)
        let playbackMax = alignment.latency
        var playbackDelaysChanged = false
        var compensation: [OutputCompensation] = []
        // A delay counts as changed against what was last published (a delay preset before a
        // connection was made again is reported here, with the measurement that confirms it).
        let published = Dictionary(control.withLock { $0.compensation }.map { ($0.port, $0.delay) }, uniquingKeysWith: { a, _ in a })
        for (i, (output, latency)) in zip(outputs, playback).enumerated() {
            if output.bank?.pointee.setDelay(alignment.delays[i], channel: output.channel) == true
                || (output.bank != nil && published[output.name] != nil && published[output.name] != alignment.delays[i]) {
                playbackDelaysChanged = true
            }
            let short = output.name.split(separator: ":", maxSplits: 1).last.map(String.init) ?? output.name
            compensation.append(OutputCompensation(
                port: output.name, connections: measured.connections.filter { $0.oursIsOutput && $0.ours == short }.map(\.other),
                latency: latency, delay: output.bank?.pointee.delay(channel: output.channel) ?? 0))
        }
        control.withLock {
            $0.connections = measured.connections
            $0.compensation = compensation
        }
        realtime.pointee.playbackLatencySpread.store(alignment.delays.max() ?? 0, ordering: .releasing)
        realtime.pointee.playbackLatency.store(playbackMax, ordering: .releasing)
        // Capture: the inputs.
        let capture = measured.capture
        var captureMax = 0
        var captureDelaysChanged = false
        if let bank = realtime.pointee.inputDelays {
            captureMax = capture.compactMap { $0 }.max() ?? 0
            for (c, latency) in capture.enumerated() where bank.pointee.setDelay(latency.map { captureMax - $0 } ?? 0, channel: c) {
                captureDelaysChanged = true
            }
        }
        realtime.pointee.captureLatency.store(captureMax, ordering: .releasing)
        recordHistory(compensation: compensation, connections: measured.connections,
                      latencies: (playbackMax, captureMax), playbackDelaysChanged: playbackDelaysChanged,
                      captureDelaysChanged: captureDelaysChanged)
    }

    /// The connections of `ports` (each with whether it is an output), by the port's short name.
    static func connections(of ports: [(PortHandle, Bool)], client: OpaquePointer) -> [Connection] {
        var result: [Connection] = []
        for (port, isOutput) in ports {
            guard let list = jack_port_get_all_connections(client, port.pointer) else { continue }
            defer { jack_free(UnsafeMutableRawPointer(list)) }
            let short = String(cString: jack_port_short_name(port.pointer))
            var i = 0
            while let other = list[i] {
                result.append(Connection(ours: short, other: String(cString: other), oursIsOutput: isOutput))
                i += 1
            }
        }
        return result
    }
}
