import Lockstep
import LockstepJACK
import LockstepSession

/// The device connects a session's layers' own outputs when an edit changes their ports.
extension JACKDevice: LayerPortConnector {}

extension JACKDevice {
    /// Connects the master outputs to `ports`: one port takes every output; several take `out_1`
    /// to the first, `out_2` to the second, and so on. Nothing when empty.
    public func connectMasterOutputs(to ports: [String]) throws(AudioQueueError) {
        let outputs = outputPortNames
        if ports.count == 1 {
            for output in outputs { try connect(output, to: ports[0]) }
        } else {
            for (output, destination) in zip(outputs, ports) { try connect(output, to: destination) }
        }
    }

    /// Connects the own outputs of every layer of `player` that names ports to those ports.
    public func connectLayerPorts(of player: SessionPlayer) throws(AudioQueueError) {
        for (layer, queue) in zip(player.timeline.layers, player.queues) where !layer.ports.isEmpty {
            for (output, destination) in zip(queue.directOutputNames, layer.ports) {
                do { try connect(output, to: destination) } catch {
                    throw AudioQueueError(error.code, "layer '\(layer.name)': \(error.message)")
                }
            }
        }
    }
}
