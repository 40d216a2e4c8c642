import CJack
import Foundation
import Lockstep
import Synchronization

/// Server restarts.
extension JACKDevice {
    /// Whether the server went away and the device waits for it to come back
    /// (``Options/survivesServerRestart``).
    public var isWaitingForServer: Bool { control.withLock { $0.awaySince != nil } }

    /// The server is away: the first time, close the dead client and report `serverLost`; then,
    /// every 250 ms, try to open the client again on a server of the same name. Monitor thread.
    func waitForServer(_ renderer: DeviceRenderer) {
        let rt = realtime
        let now = Date()
        let first = control.withLock { state -> Bool in
            guard state.awaySince == nil else { return false }
            state.awaySince = now
            state.nextAttempt = now.addingTimeInterval(0.25)
            return true
        }
        if first {
            while rt.pointee.inRender.load(ordering: .sequentiallyConsistent) { usleep(100) }
            live.withLock { live in
                if let client = live.client { Self.closeDeadClient(client) }
                live.client = nil
            }
            // The process thread is gone: its clock fields are ours to read.
            let last = rt.pointee.previousDeviceTime + Int64(rt.pointee.previousFrames)
            renderer.reportDiscontinuityFromNotificationThread(.serverLost, sampleTime: last, detail: 0)
            return
        }
        let due = control.withLock { state -> Bool in
            guard now >= state.nextAttempt else { return false }
            state.nextAttempt = now.addingTimeInterval(0.25)
            return true
        }
        guard due else { return }
        reopen(awaySince: control.withLock { $0.awaySince } ?? now)
    }

    /// Opens the client again under the same name, registers the same ports, resets the realtime
    /// state for it and activates it; on any failure closes it again (the next attempt retries).
    func reopen(awaySince: Date) {
        let rt = realtime
        var status = jack_status_t(rawValue: 0)
        JACKGraph.quietLibjack()
        guard let client = lockstep_jack_client_open(name, resolvedServerName, 1, &status) else { return }
        guard String(cString: jack_get_client_name(client)) == name else {
            jack_client_close(client)          // the name is taken: our port names would change
            return
        }
        func register(_ short: String, output: Bool) -> OpaquePointer? {
            jack_port_register(client, short, JACK_DEFAULT_AUDIO_TYPE,
                               UInt((output ? JackPortIsOutput : JackPortIsInput).rawValue), 0)
        }
        var master: [OpaquePointer] = []
        var inputs: [OpaquePointer] = []
        for c in 0..<channelCount {
            guard let port = register("out_\(c + 1)", output: true) else { jack_client_close(client); return }
            master.append(port)
        }
        for c in 0..<inputChannelCount {
            guard let port = register("in_\(c + 1)", output: false) else { jack_client_close(client); return }
            inputs.append(port)
        }
        var midiPort: OpaquePointer?
        if let short = options.midiInputPortName {
            midiPort = jack_port_register(client, short, JACK_DEFAULT_MIDI_TYPE, UInt(JackPortIsInput.rawValue), 0)
            if midiPort == nil { jack_client_close(client); return }
        }
        var midiOutPorts: [OpaquePointer] = []
        for output in midiOutputs {
            let short = output.portName.split(separator: ":", maxSplits: 1).last.map(String.init) ?? output.portName
            guard let port = jack_port_register(client, short, JACK_DEFAULT_MIDI_TYPE, UInt(JackPortIsOutput.rawValue), 0) else {
                jack_client_close(client)
                return
            }
            midiOutPorts.append(port)
        }
        let records = control.withLock { $0.directRecords.values.map { ($0.record, $0.names) } }
        var direct: [(UnsafeMutablePointer<JACKDirectRecord>, [OpaquePointer])] = []
        for (record, names) in records {
            var ports: [OpaquePointer] = []
            for full in names {
                let short = full.split(separator: ":", maxSplits: 1).last.map(String.init) ?? full
                guard let port = register(short, output: true) else { jack_client_close(client); return }
                ports.append(port)
            }
            direct.append((record, ports))
        }
        // No process callback runs now (the old client is closed, the new one inactive).
        for (c, port) in master.enumerated() { rt.pointee.ports[c] = port }
        for (c, port) in inputs.enumerated() { rt.pointee.inputPorts[c] = port }
        rt.pointee.midiPort = midiPort
        for (index, port) in midiOutPorts.enumerated() { rt.pointee.midiOutPorts[index] = port }
        for (record, ports) in direct {
            for (c, port) in ports.enumerated() { record.pointee.ports[c] = port }
        }
        rt.pointee.client = client
        rt.pointee.lastFrame32 = 0
        rt.pointee.high = 0
        rt.pointee.shutdownReason[0] = 0
        rt.pointee.sampleRate.store(Int(jack_get_sample_rate(client)), ordering: .releasing)
        rt.pointee.bufferSize.store(Int(jack_get_buffer_size(client)), ordering: .releasing)
        rt.pointee.awayMilliseconds.store(Int(Date().timeIntervalSince(awaySince) * 1000), ordering: .releasing)
        rt.pointee.restartSync.store(true, ordering: .releasing)
        rt.pointee.isShutDown.store(false, ordering: .sequentiallyConsistent)
        Self.setCallbacks(client, rt)
        let closed = control.withLock { $0.closed }
        if closed {                            // detached meanwhile
            jack_client_close(client)
            return
        }
        live.withLock { $0.client = client }
        let active = control.withLock { $0.active }
        if active && withClient({ jack_activate($0) }) != 0 {
            rt.pointee.isShutDown.store(true, ordering: .sequentiallyConsistent)
            live.withLock { live in
                if let client = live.client { jack_client_close(client) }
                live.client = nil
            }
            return
        }
        control.withLock { state in
            state.awaySince = nil
            state.pendingConnections = state.connections
            state.restoreDeadline = Date().addingTimeInterval(10)
        }
        restoreConnections()
        rt.pointee.latencyDirty.store(true, ordering: .releasing)
        rt.pointee.monitorWake.signal()
    }

    /// Makes the connections the device's ports had before the server went away, as far as the
    /// other ports exist yet (retried by the monitor for 10 s after a restart).
    ///
    /// A port that is gone is followed to its successor (``JACKGraph/successor(of:among:)``): a
    /// netjack2 slave that rejoined as `<name>-01` is connected there, and the connection is
    /// wanted under the new name from then on.
    func restoreConnections() {
        let (pending, deadline) = control.withLock { ($0.pendingConnections, $0.restoreDeadline) }
        guard !pending.isEmpty else { return }
        let name = self.name
        // Read before taking the client (it takes the control lock, never inside the client's).
        let outputs = playbackOutputs()
        let outcome: (left: [Connection], moved: [(from: Connection, to: String)]) = withClient { client in
            let existing = JACKGraph.ports(client: client, pattern: nil, flags: 0)
            var left: [Connection] = []
            var moved: [(from: Connection, to: String)] = []
            // The delays the outputs need once connected, set before they are.
            var returning: [String: [String]] = [:]
            for connection in pending where connection.oursIsOutput {
                if let other = JACKGraph.successor(of: connection.other, among: existing) { returning[connection.ours, default: []].append(other) }
            }
            if !returning.isEmpty { self.presetDelays(for: returning, outputs: outputs, client: client) }
            for connection in pending {
                guard let other = JACKGraph.successor(of: connection.other, among: existing) else {
                    left.append(connection)
                    continue
                }
                let ours = "\(name):\(connection.ours)"
                let result = connection.oursIsOutput ? jack_connect(client, ours, other) : jack_connect(client, other, ours)
                if result != 0 && result != EEXIST {
                    left.append(connection)
                } else if other != connection.other {
                    moved.append((connection, other))
                }
            }
            return (left, moved)
        } ?? (pending, [])
        control.withLock { state in
            state.pendingConnections = Date() < deadline ? outcome.left : []
            for (old, other) in outcome.moved {
                var new = old
                new.other = other
                state.wanted = state.wanted.map { $0 == old ? new : $0 }
                state.connections = state.connections.map { $0 == old ? new : $0 }
                let port = "\(name):\(old.ours)"
                if var history = state.history[port] {
                    for i in history.outages.indices where history.outages[i].rejoined == nil && history.outages[i].following == old.other {
                        history.outages[i].following = other
                    }
                    state.history[port] = history
                }
            }
        }
    }
}
