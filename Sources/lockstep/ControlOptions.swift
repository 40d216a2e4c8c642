import ArgumentParser
import Foundation
import LockstepOSC
import LockstepWeb

/// The control surfaces `play` and `session run` share (`@OptionGroup`): typed commands from a
/// file or FIFO, OSC over UDP and TCP, the web cue page, and JACK MIDI. Every surface hands its commands to the
/// same ``LockstepControl/ControlDispatcher``.
struct ControlOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Read control commands, one a line, from this file or FIFO ('-': standard input).", valueName: "file"))
    var control: String?

    @Option(name: .customLong("osc"), defaultAsFlag: ListenAddress.osc, parsing: .next,
            help: ArgumentHelp("Answer control commands over OSC (UDP) with QLab's addresses, on [HOST:]PORT; --osc alone listens on 127.0.0.1:53000, QLab's port (HOST defaults to 127.0.0.1, this machine only).", valueName: "[HOST:]PORT"))
    var oscAddress: ListenAddress?

    /// `--osc`'s address as typed (`127.0.0.1:53000` for a bare `--osc`); nil: no OSC over UDP.
    var osc: String? { oscAddress?.text }

    @Option(name: .customLong("osc-tcp"), defaultAsFlag: ListenAddress.osc, parsing: .next,
            help: ArgumentHelp("Answer control commands over OSC on TCP with SLIP framing (OSC 1.1, QLab 5's TCP) on [HOST:]PORT; --osc-tcp alone listens on 127.0.0.1:53000 (HOST defaults to 127.0.0.1); replies and updates come back on the connection.", valueName: "[HOST:]PORT"))
    var oscTCPAddress: ListenAddress?

    /// `--osc-tcp`'s address as typed; nil: no OSC over TCP.
    var oscTCP: String? { oscTCPAddress?.text }

    @Option(name: .customLong("osc-passcode"), help: "OSC clients must send /connect CODE before any other message.")
    var oscPasscode: String?

    @Option(name: .customLong("osc-reply-port"), help: "The UDP port OSC replies and updates go to on the sender's host, until a client sends /udpReplyPort (default 53001, QLab's).")
    var oscReplyPort: Int?

    @Option(name: .customLong("web"), defaultAsFlag: ListenAddress.web, parsing: .next,
            help: ArgumentHelp("Serve the web cue page (cue list, GO, meters, timeline) on [HOST:]PORT and print its URL; --web alone serves it on 127.0.0.1:8080 (HOST defaults to 127.0.0.1, this machine only).", valueName: "[HOST:]PORT"))
    var webAddress: ListenAddress?

    /// `--web`'s address as typed (`127.0.0.1:8080` for a bare `--web`); nil: no web page.
    var web: String? { webAddress?.text }

    @Option(name: .customLong("web-token"), help: ArgumentHelp("Pages must carry this token (the URL printed does: ?token=…).", valueName: "token"))
    var webToken: String?

    @Option(name: .customLong("web-edit-token"), help: ArgumentHelp("Only pages that also carry this token may edit the show (set, add, duplicate, delete, move, group, set-layer, learn, unlearn, undo, redo, save, the media list); the edit URL printed does: edit=…. Without it every page may.", valueName: "token"))
    var webEditToken: String?

    @Flag(help: "Take commands from JACK MIDI through the session's triggers (play: MIDI Show Control GO, STOP, RESUME and ALL_OFF): registers the input port <client>:midi_in.")
    var midi = false

    @Option(name: .customLong("midi-connect"), help: ArgumentHelp("Connect this JACK MIDI output port to midi_in (implies --midi); repeat for several.", valueName: "port"),
            completion: Completions.ports)
    var midiConnect: [String] = []

    @Option(name: .customLong("midi-latency"), help: ArgumentHelp("Place each MIDI event's commands this many samples after the event, on the sample session render --midi-file places them (512 = two periods of 256 lands every one on its sample); 'next' (the default): carry each out as soon as it comes, a GO sounding from the next cycle.", valueName: "samples|next"),
            transform: { $0 == "next" ? MIDIPlacement.next : .after(Int(try TimeOption.samples($0))) })
    var midiLatency: MIDIPlacement?

    /// Whether MIDI control is on.
    var usesMIDI: Bool { midi || !midiConnect.isEmpty || midiLatency != nil }

    /// Whether any control surface was asked for.
    var isRequested: Bool { control != nil || osc != nil || oscTCP != nil || web != nil || usesMIDI }

    /// Whether commands can still come once the run is under way (a surface is open, or the
    /// control file has not ended); `controlFinished` tells whether the typed commands ended.
    func canStillCommand(controlFinished: Bool) -> Bool {
        osc != nil || oscTCP != nil || web != nil || usesMIDI || (control != nil && !controlFinished)
    }

    func validate() throws {
        if let control, control != "-" {
            var info = stat()
            guard stat(control, &info) == 0 else {
                throw ValidationError("--control \(control): \(String(cString: strerror(errno))); give a file or FIFO of commands (mkfifo makes one), or - for standard input")
            }
            let type = info.st_mode & S_IFMT
            guard type == S_IFREG || type == S_IFIFO || type == S_IFCHR || type == S_IFSOCK else {
                let what = type == S_IFDIR ? "is a directory" : "is not a file or FIFO"
                throw ValidationError("--control \(control) \(what); give a file or FIFO of commands (mkfifo makes one), or - for standard input")
            }
            guard access(control, R_OK) == 0 else {
                throw ValidationError("--control \(control) cannot be read (\(String(cString: strerror(errno)))); check its permissions")
            }
        }
        if let osc {
            do { _ = try OSCEndpoint.parse(osc) } catch {
                throw ValidationError(error.message + ListenAddress.osc.hint(option: "--osc", for: osc))
            }
        } else if oscReplyPort != nil {
            throw ValidationError("--osc-reply-port needs --osc [HOST:]PORT (TCP replies come back on the connection)")
        }
        if let oscTCP {
            do { _ = try OSCEndpoint.parse(oscTCP, option: "--osc-tcp") } catch {
                throw ValidationError(error.message + ListenAddress.osc.hint(option: "--osc-tcp", for: oscTCP))
            }
        }
        if osc == nil && oscTCP == nil && oscPasscode != nil {
            throw ValidationError("--osc-passcode needs --osc [HOST:]PORT or --osc-tcp [HOST:]PORT")
        }
        if let web {
            do { _ = try WebControlServer.endpoint(web) } catch {
                throw ValidationError(error.message + ListenAddress.web.hint(option: "--web", for: web))
            }
        } else if webToken != nil || webEditToken != nil {
            throw ValidationError("\(webToken != nil ? "--web-token" : "--web-edit-token") needs --web [HOST:]PORT")
        }
        if let webToken, webToken.isEmpty { throw ValidationError("--web-token is empty; give a token, or leave the option out") }
        if let webEditToken, webEditToken.isEmpty { throw ValidationError("--web-edit-token is empty; give a token, or leave the option out") }
        if let oscPasscode, oscPasscode.isEmpty { throw ValidationError("--osc-passcode is empty; give a passcode, or leave the option out") }
        if case .after(let midiLatency)? = midiLatency, !(0...MIDIDefaults.maximumLatency).contains(midiLatency) {
            throw ValidationError("--midi-latency \(midiLatency) is out of range; give 0 to \(MIDIDefaults.maximumLatency) samples")
        }
        if let port = midiConnect.first(where: { !$0.contains(":") }) {
            throw ValidationError("--midi-connect '\(port)' is not a JACK port name; write client:port (lockstep ports lists them)")
        }
        if let oscReplyPort, !(1...65535).contains(oscReplyPort) {
            throw ValidationError("--osc-reply-port \(oscReplyPort) is not a UDP port; use 1 to 65535")
        }
    }
}

/// The value of `--web`, `--osc` or `--osc-tcp`: `[HOST:]PORT` as typed (``ControlOptions/validate()``
/// checks it).
///
/// Each option may come alone: then it listens on its standard address (``web``: 127.0.0.1:8080,
/// ``osc``: 127.0.0.1:53000, QLab's). The word after it is its address unless that word names an
/// existing file or folder and has neither a colon nor only digits — an address always has a
/// port, so `session run --web show.yaml` is a bare `--web` and the session's file, while
/// `--web 9000`, `--osc 0.0.0.0:53000` and a mistyped `--web 80a0` are addresses (the last one
/// refused by validation, saying how to write it).
struct ListenAddress: ExpressibleByArgument, CustomStringConvertible, Sendable, Hashable {
    /// The address as typed.
    var text: String

    /// The address a bare `--web` serves the cue page on: this machine only, port 8080.
    static let web = ListenAddress(text: "127.0.0.1:8080")
    /// The address a bare `--osc` or `--osc-tcp` listens on: this machine only, QLab's port 53000.
    static let osc = ListenAddress(text: "127.0.0.1:53000")

    /// An address as typed.
    init(text: String) { self.text = text }

    /// The word after the option as its address; nil when it is the command's file instead.
    init?(argument: String) {
        let portLike = argument.contains(":") || (!argument.isEmpty && argument.allSatisfy(\.isNumber))
        if !portLike && FileManager.default.fileExists(atPath: argument) { return nil }
        text = argument
    }

    /// The address as typed (what help shows as the bare flag's default).
    var description: String { text }

    /// The options that take an optional address.
    static let options: Set<String> = ["--web", "--osc", "--osc-tcp"]

    /// `arguments` with a dash-led word that follows `--web`, `--osc` or `--osc-tcp` and reads as
    /// a number (`-1`, `-0.5`, `-inf`, `-nan`) joined to the option (`--osc=-1`): ArgumentParser
    /// takes such a word for an option, so a bare option and an "unknown option '-1'" would
    /// hide what was meant; joined, validation names the option and says how to write it.
    static func joiningDashedValues(_ arguments: [String]) -> [String] {
        var result: [String] = []
        var index = 0
        while index < arguments.count {
            let word = arguments[index]
            if options.contains(word), index + 1 < arguments.count {
                let next = arguments[index + 1]
                let body = next.dropFirst().lowercased()
                if next.hasPrefix("-") && !next.hasPrefix("--")
                    && (body.first.map { $0.isNumber || $0 == "." } == true || body.hasPrefix("inf") || body.hasPrefix("nan")) {
                    result.append("\(word)=\(next)")
                    index += 2
                    continue
                }
            }
            result.append(word)
            index += 1
        }
        return result
    }

    /// What to add to the error for a refused `value` of `option` that looks like a file name
    /// (a bare option before the command's file, which does not exist, takes it for its
    /// address); empty otherwise.
    func hint(option: String, for value: String) -> String {
        let looksLikeFile = !value.contains(":") && (value.contains("/") || (value.split(separator: ".").last.map { ext in
            value.contains(".") && (1...5).contains(ext.count) && ext.allSatisfy(\.isLetter) } ?? false))
        return looksLikeFile
            ? " (a bare \(option) takes the word after it for its address unless that word is an existing file: put \(option) after the file, or write \(option)=\(text))"
            : ""
    }
}
