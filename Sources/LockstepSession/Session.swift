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
    /// The text the session was read from (what ``SessionFile/save(_:of:force:)`` edits).
    public private(set) var text = ""

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
            text = try readSessionFile(path)
        } catch {
            throw SessionError(.audioFile, at: SourceLocation(path: path, line: 1, column: 1), error.problem)
        }
        return try parse(text: text, path: path)
    }

    /// The largest session file read: far more than 100 000 cues take (about 6 MB).
    public static let maximumFileBytes = 64 << 20

    /// Why a session file cannot be read.
    struct ReadProblem: Error { var problem: String }

    /// Reads the session file at `path` as UTF-8 text through ``LockstepFiles/RegularFile``
    /// (never blocking on a FIFO, device or socket), refusing a folder, such special files, a file
    /// over ``maximumFileBytes`` and text that is not UTF-8.
    static func readSessionFile(_ path: String) throws(ReadProblem) -> String {
        let contents: RegularFile.Contents
        do {
            contents = try RegularFile.read(path, maximumBytes: maximumFileBytes)
        } catch {
            switch error.kind {
            case .notFound:
                throw ReadProblem(problem: "no session file here; check the path")
            case .notAFile:
                let what = RegularFile.kind(at: path) ?? "not a regular file"
                throw ReadProblem(problem: what == "a folder" ? "this is a folder, not a session file; name the .yaml file"
                    : "this is \(what), not a session file; save the session to a file and give its path (its relative audio paths resolve against the file's folder)")
            case .permissionDenied:
                throw ReadProblem(problem: "permission denied; make the session file readable (chmod +r) or run as its owner")
            default:
                throw ReadProblem(problem: "cannot read the session file: \(error.message)")
            }
        }
        guard contents.size <= Int64(maximumFileBytes) else {
            throw ReadProblem(problem: "the session file is \(contents.size / (1 << 20)) MiB, more than the \(maximumFileBytes >> 20) MiB a session may be; is it really a session file?")
        }
        guard let text = String(validating: contents.bytes, as: UTF8.self) else {
            throw ReadProblem(problem: "the session file is not UTF-8 text; save it as UTF-8 (it is a YAML text file)")
        }
        return text
    }

    /// Parses and checks session text as if it were the file at `path` (relative audio paths
    /// resolve against `path`'s folder).
    /// - Throws: ``SessionError`` listing every problem found.
    public static func parse(text: String, path: String) throws(SessionError) -> Session {
        try parse(text: text, path: path, known: [])
    }

    /// As ``parse(text:path:)``, taking what `known` says of its files instead of opening them
    /// again (a session read anew after an edit).
    static func parse(text: String, path: String, known: [AudioFileInfo]) throws(SessionError) -> Session {
        var parser = SessionParser(path: path, text: text)
        let (document, parsed) = try parser.parseCollecting()
        var diagnostics = parsed
        var files: [AudioFileInfo] = []
        files.reserveCapacity(document.cues.count)
        // Each file is opened once, however many cues play it.
        var opened: [String: Result<AudioFileInfo, FileError>] = [:]
        for info in known where info.frameCount > 0 { opened[info.path] = .success(info) }
        for cue in document.cues {
            var info = AudioFileInfo(path: cue.resolvedFile, sampleRate: document.rate, channelCount: 1, frameCount: 0)
            if !cue.file.isEmpty {
                let result = opened[cue.resolvedFile] ?? Self.inspect(cue.resolvedFile)
                opened[cue.resolvedFile] = result
                switch result {
                case .success(let found):
                    info = found
                    let layer = document.layers.first { $0.name == cue.layer }
                    if let map = cue.channelMap ?? layer?.channelMap {
                        let at = cue.channelMap != nil ? cue.location(of: "channel_map") : (layer?.channelMapLocation ?? cue.location)
                        do {
                            let matrix = try map.matrix(inputs: info.channelCount, outputs: document.channelCount)
                            if !matrix.droppedInputs.isEmpty {
                                FileWarnings.shared.record(.droppedChannels(path: cue.resolvedFile,
                                    channels: matrix.droppedInputs.map { $0 + 1 }, matrix: matrix))
                            }
                        } catch {
                            let whose = cue.channelMap != nil ? "" : " (layer '\(SessionParser.excerpt(cue.layer))')"
                            diagnostics.append(.init(.invalidValue, at: at,
                                "cue '\(SessionParser.excerpt(cue.name))': channel_map\(whose) for '\(SessionParser.excerpt(cue.file))': \(error.problem)"))
                        }
                    } else if let matrix = ChannelMatrix.standardDownmix(from: info.channelCount, to: document.channelCount),
                              !matrix.droppedInputs.isEmpty {
                        FileWarnings.shared.record(.droppedChannels(path: cue.resolvedFile,
                            channels: matrix.droppedInputs.map { $0 + 1 }, matrix: matrix))
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
        session.text = text
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

extension Session {
    /// The same session with `document` edited (its cues' properties; the same cues, files and
    /// layers): checked again when its timeline is built.
    init(editing base: Session, document: SessionDocument) {
        self.init(document: document, files: base.files)
        text = base.text
    }
}
