import Foundation
import Lockstep
import LockstepFiles

/// A checked session: the parsed file plus what its audio files hold. Build its timeline at a
/// sample rate with ``timeline(rate:)``.
///
/// ```swift
/// let session = try Session.load(path: "show.yaml")
/// let timeline = try session.timeline(rate: 48000)
/// for cue in timeline.cues { print(cue.name, cue.start ?? -1) }
/// ```
public struct Session: Sendable {
    /// The file as written.
    public let document: SessionDocument
    /// What each cue's audio file holds, by cue index.
    public let files: [AudioFileInfo]
    /// The timeline at the document's rate, built when the session was checked.
    private var checkedTimeline: SessionTimeline?

    /// The facts about an audio file the timeline needs.
    public struct AudioFileInfo: Sendable, Hashable {
        /// The absolute path.
        public var path: String
        /// The file's sample rate.
        public var sampleRate: Double
        /// The file's channel count.
        public var channelCount: Int
        /// The file's length in frames.
        public var frameCount: Int64
    }

    /// Reads, parses and checks the session file at `path`: every key and value, every audio file
    /// (opened to read its header), every reference between cues, and the timeline at the
    /// session's rate.
    ///
    /// - Throws: ``SessionError`` listing every problem found, each with its line and column.
    public static func load(path: String) throws(SessionError) -> Session {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            let problem = !exists ? "no session file here; check the path"
                : isDirectory.boolValue ? "this is a folder, not a session file; name the .yaml file"
                : "cannot read the session file (not UTF-8 text, or no permission); check it is a YAML text file you can read"
            throw SessionError(.audioFile, at: SourceLocation(path: path, line: 1, column: 1), problem)
        }
        return try parse(text: text, path: path)
    }

    /// Parses and checks session text as if it were the file at `path` (relative audio paths
    /// resolve against `path`'s folder).
    /// - Throws: ``SessionError`` listing every problem found.
    public static func parse(text: String, path: String) throws(SessionError) -> Session {
        var parser = SessionParser(path: path, text: text)
        let (document, parsed) = try parser.parseCollecting()
        var diagnostics = parsed
        var files: [AudioFileInfo] = []
        files.reserveCapacity(document.cues.count)
        // Each file is opened once, however many cues play it.
        var opened: [String: Result<AudioFileInfo, FileError>] = [:]
        for cue in document.cues {
            var info = AudioFileInfo(path: cue.resolvedFile, sampleRate: document.rate, channelCount: 1, frameCount: 0)
            if !cue.file.isEmpty {
                let result = opened[cue.resolvedFile] ?? Self.inspect(cue.resolvedFile)
                opened[cue.resolvedFile] = result
                switch result {
                case .success(let found):
                    info = found
                    if info.channelCount > 1 && info.channelCount > document.channelCount {
                        diagnostics.append(.init(.audioFile, at: cue.location(of: "file"),
                            "cue '\(SessionParser.excerpt(cue.name))': '\(SessionParser.excerpt(cue.file))' has \(info.channelCount) channels but the session has \(document.channelCount); set 'channels: \(info.channelCount)' or mix the file down"))
                    }
                    if info.frameCount == 0 {
                        diagnostics.append(.init(.audioFile, at: cue.location(of: "file"),
                            "cue '\(SessionParser.excerpt(cue.name))': '\(SessionParser.excerpt(cue.file))' holds no audio; use a file with at least one frame"))
                    }
                    let ratio = document.rate / info.sampleRate
                    if !SoxrRateConverter.supportedRatios.contains(ratio) {
                        diagnostics.append(.init(.audioFile, at: cue.location(of: "file"),
                            "cue '\(SessionParser.excerpt(cue.name))': '\(SessionParser.excerpt(cue.file))' is at \(Int(info.sampleRate)) Hz, too far from the session's \(Int(document.rate)) Hz to convert; resample the file"))
                    }
                case .failure(let error):
                    let how = error.kind == .notFound ? "not found at \(cue.resolvedFile); relative paths resolve against the session file's folder, check the name"
                        : "\(error.message)"
                    diagnostics.append(.init(.audioFile, at: cue.location(of: "file"), "cue '\(SessionParser.excerpt(cue.name))': audio file '\(SessionParser.excerpt(cue.file))' \(error.kind == .notFound ? "" : "is unusable: ")\(how)"))
                }
            }
            files.append(info)
        }
        var session = Session(document: document, files: files)
        // Reference and timing checks (at the session's own rate), kept for timeline(rate:).
        do throws(SessionError) {
            session.checkedTimeline = try session.timeline(rate: document.rate)
        } catch {
            diagnostics += error.diagnostics
        }
        if !diagnostics.isEmpty { throw SessionError(diagnostics) }
        return session
    }

    /// Opens the audio file at `path` (rejecting truncated files) and reads what the timeline needs.
    private static func inspect(_ path: String) -> Result<AudioFileInfo, FileError> {
        do {
            let reader = try AudioFileReader(path: path, truncation: .reject)
            defer { reader.close() }
            return .success(AudioFileInfo(path: path, sampleRate: reader.format.sampleRate,
                                          channelCount: reader.format.channelCount, frameCount: reader.frameCount))
        } catch {
            return .failure(error)
        }
    }

    /// Resolves every cue and automation point to sample times at `rate`.
    ///
    /// - Parameter rate: the rate the session runs at (a render's output rate, or the JACK
    ///   server's rate); times written in samples count samples at this rate.
    /// - Throws: ``SessionError`` for unknown references, cycles, cues following a cue that never
    ///   ends, crossfades longer than the cues, and regions outside their files.
    public func timeline(rate: Double) throws(SessionError) -> SessionTimeline {
        if let checkedTimeline, checkedTimeline.rate == rate { return checkedTimeline }
        var builder = SessionTimelineBuilder(session: self, rate: rate)
        return try builder.build()
    }
}
