import Foundation
import Lockstep
import LockstepTestSupport
import Testing

/// A main and a backup (`session run --main` / `--backup-of`) on two jackd servers of their own,
/// each recorded by `lockstep record` (libjack holds clients of one server per process; every
/// client a name of its own on the machine), for the backup tests. Asked for, and where the
/// machine allows it, the main and the backup run in two network namespaces joined by a veth pair
/// (two network stacks, the link on addresses of their own), else both on loopback. The show puts each layer on a
/// channel of its own: a bed that says which of its samples plays, a looping pad, cues on fx.
struct BackupRig {
    static let step: Float = 1.0 / 65536
    static let period = 1024
    static let passcode = "s3cret"
    /// The bed's length in samples when the show is longer (its values name its samples).
    static let bedLoop = 1 << 23

    let temp: TemporaryTestDirectory
    let show: String
    let text: String
    let mainServer: JACKServer
    let backupServer: JACKServer
    let name = "lsbk\(getpid() % 100_000)"
    /// The two network namespaces, the main's machine (`a`) and the backup's (`b`); nil: loopback.
    let network: NetnsPair?

    /// A machine of the rig: the main's or the backup's.
    enum Machine { case main, backup }

    /// Writes the show (a bed of `seconds`) and starts both servers (and, with
    /// `networkNamespaces`, the namespaces where they can be made).
    init(prefix: String, seconds: Int, networkNamespaces: Bool = false) throws {
        network = networkNamespaces ? try? NetnsPair() : nil
        temp = try TemporaryTestDirectory(prefix: prefix)
        let format = StreamFormat(sampleRate: 48000, channelCount: 1)
        // (The bed's values name its samples up to 2^23; a longer show loops it, and
        // ``frames(_:)`` counts the loops.)
        let looped = 48000 * seconds > Self.bedLoop
        try FileFixtures.writeWAV(path: temp.file("bed.wav"), samples: Signals.ramp(frames: min(48000 * seconds, Self.bedLoop), start: 1, step: Self.step), format: format)
        try FileFixtures.writeWAV(path: temp.file("pad.wav"), samples: Signals.constant(0.25, frames: 48000), format: format)
        try FileFixtures.writeWAV(path: temp.file("bell.wav"), samples: Signals.ramp(frames: 24000, start: 1, step: Self.step), format: format)
        try FileFixtures.writeWAV(path: temp.file("horn.wav"), samples: Signals.ramp(frames: 24000, start: 30_000, step: Self.step), format: format)
        show = temp.file("show.yaml")
        text = """
            channels: 3
            layers: { bed: { channel_map: "1:1" }, pad: { channel_map: "1:2" }, fx: { channel_map: "1:3" } }
            cues:
              - { name: bed, layer: bed, file: bed.wav, at: 0\(looped ? ", loop: forever" : "") }
              - { name: pad, layer: pad, file: pad.wav, at: 0, loop: forever }
              - { name: bell, layer: fx, file: bell.wav, at: manual }
              - { name: dim, type: fade, target: pad, level: -6.0206, duration: 0.3, at: manual }
              - { name: horn, layer: fx, file: horn.wav, at: manual }
              - { name: cut, type: stop, target: horn, at: manual }
              - { name: bell2, layer: fx, file: bell.wav, at: manual }

            """
        try FileFixtures.writeText(path: show, text)
        mainServer = try JACKServer(period: Self.period)
        backupServer = try JACKServer(period: Self.period)
    }

    var common: [String] { ["--control", "-", "--no-connect", "--json-events", "--link-passcode", Self.passcode] }
    /// Journals in the rig's folder, each side's own by default.
    var environment: [String: String] { ["XDG_STATE_HOME": temp.path] }

    /// Where a run on `machine` listens for a backup (`--main`): its address, any port.
    func listen(on machine: Machine) -> String {
        "\((machine == .main ? network?.aAddress : network?.bAddress) ?? "127.0.0.1"):0"
    }

    /// Starts `lockstep ARGUMENTS` on `machine` (in its namespace, if any).
    func spawn(on machine: Machine, _ arguments: [String], environment: [String: String]? = nil, withInput: Bool = false) throws -> RunningCLI {
        guard let network else { return try CLI.spawn(arguments, environment: environment ?? self.environment, withInput: withInput) }
        return try CLI.spawn(NetnsPair.arguments(in: machine == .main ? network.a : network.b, [CLI.binary] + arguments),
                             environment: environment ?? self.environment, executable: NetnsPair.ip, withInput: withInput)
    }

    /// Runs `lockstep ARGUMENTS` on `machine` to its end.
    func run(on machine: Machine, _ arguments: [String], timeout: Double = 20) throws -> CLI.Result {
        try spawn(on: machine, arguments).wait(timeout: timeout)
    }

    /// Starts the main (with `extra` options); returns it and the address its backup joins.
    func startMain(extra: [String] = []) throws -> (RunningCLI, String) {
        let main = try spawn(on: .main, ["session", "run", show, "--server", mainServer.name, "--client-name", "\(name)-main", "--main", listen(on: .main)] + extra + common,
                             withInput: true)
        #expect(main.waitForErrorOutput(containing: "link: a backup may join on", timeout: 20), "\(main.errorOutputSoFar)")
        let address = try #require(Self.address(in: main.errorOutputSoFar), "\(main.errorOutputSoFar)")
        return (main, address)
    }

    /// Starts the backup of the main at `address` (on `file`, by default the main's), once it joined.
    func startBackup(of address: String, file: String? = nil, extra: [String] = []) throws -> RunningCLI {
        let backup = try spawn(on: .backup, ["session", "run", file ?? show, "--server", backupServer.name, "--client-name", "\(name)-backup", "--backup-of", address] + extra + common,
                               withInput: true)
        #expect(backup.waitForErrorOutput(containing: "link: joined the main at", timeout: 20), "\(backup.errorOutputSoFar)")
        return backup
    }

    /// Records the master outputs of `client` (`main` or `backup`) into `<client>.wav`.
    func record(_ client: String) throws -> RunningCLI {
        let server = client == "main" ? mainServer : backupServer
        return try CLI.spawn(["record", "-o", temp.file("\(client).wav"), "--server", server.name, "--client-name", "\(name)-\(client)-rec",
                              "--port", "\(name)-\(client):out_1", "--port", "\(name)-\(client):out_2", "--port", "\(name)-\(client):out_3", "--json"])
    }

    /// Stops a recorder; returns what it said.
    static func finish(_ recorder: RunningCLI) -> CLI.Result {
        recorder.send(SIGINT)
        let result = recorder.wait(timeout: 20)
        #expect(result.status == 130 || result.status == 0, "\(result.stderr)")
        return result
    }

    /// `<client>.wav`'s samples (3 channels interleaved).
    func recording(_ client: String) throws -> [Float] { try readAudio(temp.file("\(client).wav")).samples }

    /// `HOST:PORT` from the main's `link: a backup may join on HOST:PORT` note.
    static func address(in text: String) -> String? {
        guard let range = text.range(of: "a backup may join on ") else { return nil }
        return String(text[range.upperBound...].prefix { !$0.isWhitespace })
    }

    /// Whether the JSON events or a recorder's report name an xrun.
    static func sawXrun(_ texts: String...) -> Bool {
        texts.contains { $0.contains("\"kind\":\"xrun\"") || $0.contains("\"xruns\":[{") }
    }

    /// A recording's frames as (session sample the bed names, pad, fx), up to 0.1 s before the
    /// bed's last sample (a run that ends fades out: the bed's values no longer name its samples).
    /// A looped bed's wrap (a drop of more than half its length) adds a loop.
    static func frames(_ samples: [Float]) -> [(position: Int64, pad: Float, fx: Float)] {
        let count = samples.count / 3
        let end = ((0..<count).last { samples[$0 * 3] != 0 } ?? 0) - 4800
        var result: [(position: Int64, pad: Float, fx: Float)] = []
        result.reserveCapacity(max(0, end))
        var loops: Int64 = 0, last: Int64?
        for frame in 0..<max(0, end) where samples[frame * 3] != 0 {
            let value = Int64((samples[frame * 3] / step).rounded()) - 1
            if let last, last - value > Int64(bedLoop / 2) { loops += 1 }
            last = value
            result.append((value + loops * Int64(bedLoop), samples[frame * 3 + 1], samples[frame * 3 + 2]))
        }
        return result
    }

    /// Stretches of a recording where the bed plays one sample after another, at least
    /// `minimum` long.
    static func stretches(_ frames: [(position: Int64, pad: Float, fx: Float)], minimum: Int = 14400) -> [ArraySlice<(position: Int64, pad: Float, fx: Float)>] {
        var result: [ArraySlice<(position: Int64, pad: Float, fx: Float)>] = []
        var start = 0
        for index in 1...max(1, frames.count) where index == frames.count || frames[index].position != frames[index - 1].position + 1 {
            if index - start >= minimum { result.append(frames[start..<index]) }
            start = index
        }
        return result
    }

    /// The samples of `mine` that differ from `theirs` on the same session samples (`margin`
    /// samples left out at the start of `mine`, `tail` — by default `margin` — at its end): how many were compared, the first few that differ.
    static func compare(_ theirs: ArraySlice<(position: Int64, pad: Float, fx: Float)>, _ mine: ArraySlice<(position: Int64, pad: Float, fx: Float)>,
                        margin: Int = 0, tail: Int? = nil) -> (compared: Int, count: Int, differing: [String]) {
        // (By position in an array: a 10-minute recording holds 28.8 million frames.)
        let last = Int(theirs.map(\.position).max() ?? -1)
        var byPosition = [(pad: Float, fx: Float, heard: Bool)](repeating: (0, 0, false), count: last + 1)
        for frame in theirs where frame.position >= 0 { byPosition[Int(frame.position)] = (frame.pad, frame.fx, true) }
        var compared = 0, count = 0
        var differing: [String] = []
        for frame in mine.dropFirst(margin).dropLast(tail ?? margin) {
            guard frame.position >= 0, frame.position <= last else { continue }
            let other = byPosition[Int(frame.position)]
            guard other.heard else { continue }
            compared += 1
            guard other.pad != frame.pad || other.fx != frame.fx else { continue }
            count += 1
            if differing.count < 5 {
                differing.append("session sample \(frame.position): main pad \(other.pad) fx \(other.fx), backup pad \(frame.pad) fx \(frame.fx)")
            }
        }
        return (compared, count, differing)
    }
}
