import CJack
import Foundation
import Lockstep
import Synchronization

/// Per-queue ports.
extension JACKDevice {
    /// Registers ports `<name>_1…<name>_N` and has the process callback refresh their buffers.
    public func makeDirectOutputs(name queueName: String, channelCount: Int) throws(AudioQueueError) -> DirectOutputs {
        guard !isSteered else {
            throw AudioQueueError(.invalidDevice, "a steered device cannot give a queue ports of its own: steering resamples the master outputs only")
        }
        let base = Self.portSafe(queueName)
        let registered: Result<[PortHandle], AudioQueueError> = withClient { client in
            var ports: [PortHandle] = []
            for c in 0..<channelCount {
                let short = "\(base)_\(c + 1)"
                guard let port = jack_port_register(client, short, JACK_DEFAULT_AUDIO_TYPE, UInt(JackPortIsOutput.rawValue), 0) else {
                    for p in ports { jack_port_unregister(client, p.pointer) }
                    return .failure(AudioQueueError(.invalidDevice, "cannot register JACK port '\(short)' (is the name taken or too long?); rename the queue"))
                }
                ports.append(PortHandle(pointer: port))
            }
            return .success(ports)
        } ?? .failure(AudioQueueError(.invalidDevice, "the JACK server is away; per-queue ports can be made once it is back"))
        let handles = try registered.get()
        let ports = handles.map(\.pointer)
        let names = ports.map { String(cString: jack_port_name($0)) }
        let outputs = DirectOutputs(channelCount: channelCount, names: names)
        let portArray = UnsafeMutablePointer<OpaquePointer?>.allocate(capacity: max(1, channelCount))
        for (c, port) in ports.enumerated() { portArray[c] = port }
        let record = UnsafeMutablePointer<JACKDirectRecord>.allocate(capacity: 1)
        var delays: UnsafeMutablePointer<JACKDelayBank>?
        if options.compensatesPlaybackLatency {
            let bank = UnsafeMutablePointer<JACKDelayBank>.allocate(capacity: 1)
            bank.initialize(to: JACKDelayBank(count: channelCount))
            delays = bank
        }
        record.initialize(to: JACKDirectRecord(ports: portArray, buffers: outputs.buffers, channelCount: channelCount,
                                               delays: delays))
        let error: AudioQueueError? = control.withLock { state in
            let used = Set(state.directRecords.values.map(\.index))
            guard let index = (0..<JACKRealtimeState.maximumDirectSets).first(where: { !used.contains($0) }) else {
                return AudioQueueError(.invalidDevice, "too many queues with their own ports (\(JACKRealtimeState.maximumDirectSets))")
            }
            state.directRecords[ObjectIdentifier(outputs)] = (index, record, names)
            realtime.pointee.directSets[index].store(UInt(bitPattern: record), ordering: .releasing)
            if index >= realtime.pointee.directSetsUsed.load(ordering: .relaxed) {
                realtime.pointee.directSetsUsed.store(index + 1, ordering: .releasing)
            }
            return nil
        }
        if let error {
            _ = withClient { client in for p in handles { jack_port_unregister(client, p.pointer) } }
            portArray.deallocate()
            Self.freeDelays(record.pointee.delays)
            record.deallocate()
            throw error
        }
        realtime.pointee.latencyDirty.store(true, ordering: .releasing)
        realtime.pointee.monitorWake.signal()
        return outputs
    }

    /// Unregisters a queue's ports once the process callback has let go of them.
    public func releaseDirectOutputs(_ outputs: DirectOutputs) {
        guard let entry = control.withLock({ $0.directRecords.removeValue(forKey: ObjectIdentifier(outputs)) }) else { return }
        realtime.pointee.directSets[entry.index].store(0, ordering: .releasing)
        waitForCycle()
        if !serverWentAway {
            let ports = (0..<entry.record.pointee.channelCount).compactMap { entry.record.pointee.ports[$0].map(PortHandle.init) }
            _ = withClient { client in for port in ports { jack_port_unregister(client, port.pointer) } }
        }
        entry.record.pointee.ports.deallocate()
        Self.freeDelays(entry.record.pointee.delays)
        entry.record.deallocate()
        realtime.pointee.latencyDirty.store(true, ordering: .releasing)
        realtime.pointee.monitorWake.signal()
    }

    static func freeDelays(_ bank: UnsafeMutablePointer<JACKDelayBank>?) {
        guard let bank else { return }
        bank.pointee.deallocate()
        bank.deinitialize(count: 1)
        bank.deallocate()
    }

    /// Waits until the process callback has finished any cycle that may have started before now.
    func waitForCycle() {
        guard isRunning else {
            while realtime.pointee.inRender.load(ordering: .sequentiallyConsistent) { usleep(200) }
            return
        }
        let start = realtime.pointee.cycles.load(ordering: .acquiring)
        let deadline = Date().addingTimeInterval(1)
        while realtime.pointee.cycles.load(ordering: .acquiring) - start < 2 && Date() < deadline && isRunning {
            usleep(500)
        }
    }

    static func portSafe(_ name: String) -> String {
        let cleaned = name.map { $0 == ":" || $0 == "/" ? "-" : $0 }
        return String(String(cleaned).prefix(200))
    }
}
