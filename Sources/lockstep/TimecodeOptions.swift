import ArgumentParser
import LockstepSession
import LockstepTimecode

/// `--ltc-fps` and `--ltc-start`: the frame rate and first label of the LTC that `session render
/// --ltc-channel` writes and `session run --ltc-out` sends.
struct TimecodeOptions: ParsableArguments {
    @Option(name: .customLong("ltc-fps"), help: ArgumentHelp(
        "The LTC frame rate: 24, 25, 29.97df (drop-frame) or 30 (default: the session's timecode: fps, else 25).", valueName: "rate"),
            transform: { text in
                do throws(TimecodeError) { return try TimecodeRate(parsing: text) } catch {
                    throw ValidationError("--ltc-fps: \(error.message)")
                }
            })
    var givenRate: TimecodeRate?

    @Option(name: .customLong("ltc-start"), help: ArgumentHelp(
        "The timecode of session time 0 (HH:MM:SS:FF, e.g. 01:00:00:00; default: the session's timecode: start, else 00:00:00:00).", valueName: "timecode"))
    var startText: String?

    /// Whether either option was given.
    var isGiven: Bool { givenRate != nil || startText != nil }

    /// The rate and the label of session sample 0: as given, else as the session declares them
    /// (`timecode:`), else 25 fps from 00:00:00:00.
    /// - Throws: ``ValidationError`` for a start the rate does not have.
    func resolved(_ declared: SessionDocument.SessionTimecode?) throws -> (rate: TimecodeRate, start: Timecode) {
        let rate = givenRate ?? declared?.rate ?? .fps25
        if startText == nil, let declared, declared.rate == rate { return (rate, declared.start) }
        let text = startText ?? declared?.start.description ?? "00:00:00:00"
        do throws(TimecodeError) { return (rate, try Timecode(parsing: text, rate: rate)) } catch {
            throw ValidationError("--ltc-start \(error.message)")
        }
    }

    /// Refuses `--ltc-fps`/`--ltc-start` without the option (`output`) that sends the LTC.
    func checkUsed(by output: String, given: Bool) throws {
        if isGiven && !given { throw ValidationError("--ltc-fps and --ltc-start set the LTC of \(output); give \(output) too") }
    }

    /// `--ltc-channel NUMBER` (from 1) for a session of `sessionChannels` channels, as the
    /// renderer's setting; nil without it.
    /// - Throws: ``CLIError`` (usage) for a channel the file cannot have.
    func channel(_ number: Int?, session: SessionDocument) throws -> SessionRenderer.TimecodeChannel? {
        guard let number else { return nil }
        let sessionChannels = session.channelCount
        guard (1...(sessionChannels + 1)).contains(number) else {
            throw CLIError(message: "session render: --ltc-channel \(number) is not a channel of the file: the session has \(sessionChannels); give 1 to \(sessionChannels + 1) (\(sessionChannels + 1) adds a channel for the LTC)", exitCode: 64)
        }
        let (rate, start) = try resolved(session.timecode)
        return SessionRenderer.TimecodeChannel(channel: number - 1, rate: rate, start: start)
    }

    /// The live player's timecode setting for `--ltc-out` or `--mtc-out` ports (nil when none
    /// are given).
    func setting(ports: [String], session: SessionDocument) throws -> SessionPlayer.TimecodeSetting? {
        guard !ports.isEmpty else { return nil }
        let (rate, start) = try resolved(session.timecode)
        return SessionPlayer.TimecodeSetting(rate: rate, start: start)
    }
}
