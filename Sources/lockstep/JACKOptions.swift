import ArgumentParser
import Lockstep
import LockstepJACK
import LockstepSchema
import LockstepSession

/// The JACK options `play` and `session run` share (`@OptionGroup`): which server, the client's
/// name, where the master outputs go, starting a server, surviving its restart, aligning outputs,
/// the render helper.
struct JACKOptions: ParsableArguments {
    @Option(help: "The JACK server to use (default: $JACK_DEFAULT_SERVER or JACK's default).")
    var server: String?

    @Option(name: .customLong("client-name"), help: "The JACK client name.")
    var clientName: String = "lockstep"

    @Option(name: .customLong("connect"),
            help: ArgumentHelp("Connect the master outputs to this port (repeat: out_1 to the first, out_2 to the second…).",
                               valueName: "port"),
            completion: Completions.ports)
    var connections: [String] = []

    @Flag(name: .customLong("no-connect"), help: "Don't connect the master outputs anywhere.")
    var noConnect = false

    @Option(name: .customLong("start-server"),
            help: ArgumentHelp("Start a private jackd when none runs (alsa when there is a sound card, else dummy, for auto).",
                               valueName: ServerLauncher.Mode.allCases.map(\.rawValue).joined(separator: "|")))
    var startServer: ServerLauncher.Mode = .auto

    @Flag(name: .customLong("reconnect"), help: "If the JACK server goes away, wait for a server of the same name to come back and play on from where playback stopped (same ports, connections restored) instead of exiting.")
    var reconnect = false

    @Flag(name: .customLong("align-outputs"), help: "Delay every output port by the largest playback latency of the connected outputs minus its own (JACK's latency ranges, re-read when JACK announces a change), so all are heard on the same sample (local ports and netjack2 slaves alike).")
    var alignOutputs = false

    @Flag(name: .customLong("no-render-helper"), help: "Render every layer on JACK's process thread alone. By default, past 256 layers a helper thread at the same realtime priority renders half of each cycle on a second core (the same samples either way).")
    var noRenderHelper = false

    /// Logs each output's connections, latency and delay (--verbose), and warns when the connected
    /// outputs' playback latencies differ while --align-outputs is off.
    /// - Returns: the outputs as measured, for the JSON summary.
    func reportAlignment(_ device: JACKDevice) -> [JACKDevice.OutputCompensation] {
        let outputs = device.outputCompensation
        for output in outputs where output.latency != nil {
            log.info("\(output.port) -> \(output.connections.joined(separator: ", ")): playback latency \(output.latency ?? 0), delayed by \(output.delay)")
        }
        let spread = device.playbackLatencySpread
        if !alignOutputs && spread > 0 {
            log.warning("the connected outputs' playback latencies differ by up to \(spread) frames, so they are heard up to \(spread) frames apart; --align-outputs delays the earlier ones to match")
        }
        device.beginOutputHistory()
        return outputs
    }

    /// The outputs as measured once connected (``reportAlignment(_:)``) with what happened to
    /// them up to `end` (their outages and latency changes), and one line per output to which
    /// something happened, for the text summary.
    func outputsAtEnd(_ outputs: [JACKDevice.OutputCompensation], device: JACKDevice,
                      until end: Int64) -> (outputs: [OutputCompensation], lines: [String]) {
        let final = device.withOutputHistory(outputs, until: end)
        let lines = final.filter { !$0.outages.isEmpty || !$0.changes.isEmpty }.map { output in
            let outages = output.outages.map { outage in
                let what = outage.destination + (outage.netSlave.map { " (netjack2 slave \($0))" } ?? "")
                let back = outage.rejoinedSampleTime.map { at in
                    "connected again at sample \(at)" + (outage.rejoinedAs.map { $0 == outage.destination ? "" : " as \($0)" } ?? "")
                } ?? "not back by the end"
                return "\(what) gone at sample \(outage.lostSampleTime) for \(outage.frames) frames, \(back)"
            }
            let changes = output.changes.map { change in
                "at sample \(change.sampleTime) latency \(change.latency.map(String.init) ?? "none"), delay \(change.delay)"
            }
            return "output \(output.port): " + (outages + changes).joined(separator: "; ")
        }
        return (final.map(OutputCompensation.init), lines)
    }

    /// Starts a server if none runs and the mode allows (through `launcher`), then opens the
    /// client with these options.
    /// - Throws: ``CLIError`` naming `command`.
    func openDevice(_ command: String, launcher: ServerLauncher, channels: Int, inputs: Int = 0,
                    midiInput: String? = nil, midiOutputs: [String] = []) throws -> JACKDevice {
        try launcher.ensureServer(for: command, named: server, mode: startServer)
        do {
            var options = JACKDevice.Options(clientName: clientName, serverName: server,
                                             channelCount: channels, inputChannelCount: inputs,
                                             connectToPhysicalOutputs: !noConnect && connections.isEmpty,
                                             compensatesPlaybackLatency: alignOutputs,
                                             survivesServerRestart: reconnect, midiInputPortName: midiInput,
                                             usesRenderHelper: !noRenderHelper)
            options.midiOutputPortNames = midiOutputs
            let device = try JACKDevice(options: options)
            log.info("JACK client '\(device.name)' on server '\(server ?? "default")': \(Int(device.sampleRate)) Hz, period \(device.periodFrames) frames")
            return device
        } catch {
            throw CLIError(message: "\(command): \(error.message)")
        }
    }
}

extension ServerLauncher.Mode: ExpressibleByArgument {}
