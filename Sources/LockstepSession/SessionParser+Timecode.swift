import LockstepTimecode

/// The session's timecode (`timecode: { fps: 25, start: "01:00:00:00" }`) and the cues placed on
/// it (`at: tc 01:00:10:00`).
extension SessionParser {
    /// The keys of `timecode:`.
    public static let timecodeKeys = ["fps", "start"]

    /// Parses `timecode:`: its rate (`fps`, default 25) and the label of session time 0
    /// (`start`, default 00:00:00:00).
    mutating func parseTimecode(_ node: YAMLNode) -> SessionDocument.SessionTimecode? {
        guard case .mapping(let pairs) = node.content else {
            report(.invalidValue, node, "timecode must be a mapping, e.g. timecode: { fps: 25, start: \"01:00:00:00\" }")
            return nil
        }
        var rate = TimecodeRate.fps25
        var startNode: YAMLNode?
        for (key, value) in entries(pairs, allowed: Self.timecodeKeys, context: "timecode") {
            switch key {
            case "fps":
                guard let text = scalar(value, "timecode fps", expecting: "a frame rate") else { continue }
                do throws(TimecodeError) { rate = try TimecodeRate(parsing: text) } catch {
                    report(.invalidValue, value, "timecode fps: \(error.message)")
                }
            case "start": startNode = value
            default: break
            }
        }
        var start = Timecode(hours: 0, minutes: 0, seconds: 0, frames: 0)
        if let startNode, let text = scalar(startNode, "timecode start", expecting: "a timecode, HH:MM:SS:FF") {
            do throws(TimecodeError) { start = try Timecode(parsing: text, rate: rate) } catch {
                report(.invalidTime, startNode, "timecode start \(error.message)")
                return nil
            }
        }
        return SessionDocument.SessionTimecode(rate: rate, start: start, location: location(of: node))
    }

    /// The label of `at: tc HH:MM:SS:FF` (its fields, checked against the session's rate once the
    /// whole file is read: ``checkTimecodeStarts(_:)``); nil when `text` is not of that form.
    static func timecodeStart(_ text: String) -> Timecode? {
        guard text.lowercased().hasPrefix("tc ") else { return nil }
        let fields = text.dropFirst(3).trimmingPrefix(" ").split(omittingEmptySubsequences: false) { $0 == ":" || $0 == ";" || $0 == "." }
        guard fields.count == 4, fields.allSatisfy({ !$0.isEmpty && $0.count <= 2 && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }) else {
            return Timecode(hours: -1, minutes: 0, seconds: 0, frames: 0)      // (reported by the check)
        }
        let values = fields.map { Int($0)! }
        return Timecode(hours: values[0], minutes: values[1], seconds: values[2], frames: values[3])
    }

    /// Reports every `at: tc` label that the session's `timecode:` (its rate) does not have, or
    /// that has no `timecode:` to count from.
    mutating func checkTimecodeStarts(_ document: SessionDocument) {
        for cue in document.cues {
            guard case .atTimecode(let label) = cue.start else { continue }
            let at = cue.location(of: "at")
            guard let timecode = document.timecode else {
                diagnostics.append(SessionDiagnostic(.missingKey, at: at, "cue '\(Self.excerpt(cue.name))': 'at: tc \(label)' counts from the session's timecode; add timecode: { fps: 25, start: \"01:00:00:00\" } (your rate and start)"))
                continue
            }
            guard label.hours >= 0 else {
                diagnostics.append(SessionDiagnostic(.invalidTime, at: at, "cue '\(Self.excerpt(cue.name))': 'at: tc' needs a timecode, HH:MM:SS:FF, e.g. at: tc 01:00:10:00"))
                continue
            }
            do throws(TimecodeError) { try label.validate(at: timecode.rate) } catch {
                diagnostics.append(SessionDiagnostic(.invalidTime, at: at, "cue '\(Self.excerpt(cue.name))': at: tc \(error.message)"))
            }
        }
    }
}
