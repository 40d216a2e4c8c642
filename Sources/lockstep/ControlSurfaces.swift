import Foundation
import Lockstep
import LockstepControl
import LockstepJACK
import LockstepOSC
import LockstepSchema
import LockstepSession
import LockstepWeb

/// The control surfaces of a live run (`--control`, `--osc`, `--osc-tcp`, `--web`, `--midi`), all
/// on one ``ControlDispatcher``. Their sockets are bound first (``init(options:command:notes:)``),
/// so that a port in use fails before any server starts; ``attach(to:device:triggers:)`` opens
/// them once the show plays.
final class ControlSurfaces {
    let options: ControlOptions
    let command: String
    let notes: NoteQueue
    private let oscSocket: OSCUDPSocket?
    private let oscListener: OSCTCPServer.Listener?
    let web: WebControlServer?
    private(set) var osc: OSCUDPServer?
    private(set) var oscTCP: OSCTCPServer?
    private(set) var midi: MIDIReader?
    /// The typed commands (`--control`).
    let controls: ControlReader?

    /// Binds the OSC sockets and starts the web server (its page says "starting" until attached).
    init(options: ControlOptions, command: String, notes: NoteQueue) throws {
        self.options = options
        self.command = command
        self.notes = notes
        do throws(OSCError) {
            oscSocket = try options.osc.map { text throws(OSCError) in try OSCUDPSocket(binding: try OSCEndpoint.parse(text)) }
            oscListener = try options.oscTCP.map { text throws(OSCError) in
                try OSCTCPServer.Listener(binding: try OSCEndpoint.parse(text, option: "--osc-tcp"))
            }
        } catch {
            throw CLIError(message: "\(command): \(error.message)")
        }
        web = try options.web.map { text in
            let (host, port) = try WebControlServer.endpoint(text)
            var webOptions = WebControlServer.Options(host: host, port: port, token: options.webToken)
            webOptions.editToken = options.webEditToken
            let server = WebControlServer(options: webOptions, log: { notes.add($0) })
            do throws(WebError) { try server.start() } catch { throw CLIError(message: "\(command): \(error.message)") }
            return server
        }
        controls = options.control.map { ControlReader(path: $0) }
    }

    /// Opens every surface on `dispatcher` (MIDI on the device's MIDI input, through `triggers`).
    func attach(to dispatcher: ControlDispatcher, device: JACKDevice, triggers: MIDITriggers) throws {
        let passcodeNote = options.oscPasscode == nil ? "" : "; /connect with the passcode first"
        if let oscSocket {
            let settings = OSCControlServer.Options(passcode: options.oscPasscode,
                                                    replyPort: UInt16(options.oscReplyPort ?? Int(OSCEndpoint.defaultReplyPort)))
            let server = OSCUDPServer(socket: oscSocket, dispatcher: dispatcher, options: settings, log: { [notes] in notes.add($0) },
                                      threadSetup: { device.promoteCurrentThread() })
            log.notice("OSC control on \(server.localAddress) (UDP); replies to port \(settings.replyPort)\(passcodeNote)")
            if let warning = server.exposureWarning { log.warning("\(warning)") }
            osc = server
        }
        if let oscListener {
            do throws(OSCError) {
                let server = try OSCTCPServer(listener: oscListener, dispatcher: dispatcher,
                                              options: OSCControlServer.Options(passcode: options.oscPasscode), log: { [notes] in notes.add($0) })
                log.notice("OSC control on \(server.localAddress) (TCP, SLIP framing); replies on the connection\(passcodeNote)")
                if let warning = server.exposureWarning { log.warning("\(warning)") }
                oscTCP = server
            } catch {
                throw CLIError(message: "\(command): \(error.message)")
            }
        }
        if let web {
            web.attach(SessionWebShow(dispatcher: dispatcher, destinations: { [device] in
                device.graph().filter { $0.direction == "input" && $0.type.contains("audio") && $0.client != device.name }.map(\.name)
            }))
            web.runOnServerThreads { device.promoteCurrentThread() }
            log.notice("web page on \(web.url)")
            if let edit = web.editURL { log.notice("web page, editing allowed, on \(edit)") }
            if let warning = web.exposureWarning { log.warning("\(warning)") }
        }
        if options.usesMIDI, let input = device.midiInput {
            let period = Int64(max(1, device.periodFrames))
            var latency: Int64?
            if case .after(let samples)? = options.midiLatency { latency = Int64(samples) }
            for source in options.midiConnect {
                do { try device.connect(source, to: input.portName) } catch {
                    throw CLIError(message: "\(command): --midi-connect: \(error.message)")
                }
            }
            midi = MIDIReader(input: input, device: device, control: MIDIControl(dispatcher: dispatcher, triggers: triggers, latency: latency),
                              log: { [notes] in notes.add($0) })
            let placement = latency.map { latency in
                let lateWarning = latency < 2 * period ? " (warning: less than two periods of \(period); commands can land late)" : ""
                return "commands land \(latency) samples after their event\(lateWarning)"
            } ?? "commands are carried out as they come"
            log.notice("MIDI control on \(input.portName): \(triggers.entries.count) trigger\(triggers.entries.count == 1 ? "" : "s"); \(placement)")
        }
    }

    /// Whether a command can still come (a surface is open, or the typed commands go on).
    var canStillCommand: Bool { options.canStillCommand(controlFinished: controls?.isFinished ?? true) }

    /// Closes every surface (the typed commands' reader stops at its next line).
    func stop() {
        osc?.stop()
        oscTCP?.stop()
        midi?.stop()
        web?.stop()
        controls?.close()
    }

    /// The summary's part about the surfaces: `; OSC: 3 received, …` for each one open.
    var summary: String {
        (osc.map { "; OSC: \($0.statistics.received) received, \($0.statistics.replies) replies, \($0.statistics.dropped) dropped" } ?? "")
            + (oscTCP.map { "; OSC over TCP: \($0.statistics.connections) connections, \($0.statistics.received) received, "
                            + "\($0.statistics.replies) replies, \($0.statistics.dropped) dropped" } ?? "")
            + (midi.map { let s = $0.summary
                          return "; MIDI: \(s.received) received, \(s.matched) matched, \(s.broken) broken, \(s.dropped) dropped" } ?? "")
            + (web.map { let s = $0.statistics
                         return "; web: \(s.clients) pages, \(s.commands) commands, \(s.refused) refused" } ?? "")
    }
}
