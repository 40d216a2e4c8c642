import Foundation
import Synchronization

/// A run of a show kept on disk as it goes — in a journal beside the show, never in the show
/// file — so that a crash, a kill or a power cut loses nothing: every edit (the next run finds
/// those not saved, ``pending(at:fileText:)``), and where the show was (`session run --resume`
/// plays on from there, ``resumable(at:fileText:)``). `session run` keeps one for every run
/// with a control surface, and for any run given `--journal`.
///
/// The journal is JSON Lines, written with `O_APPEND` and flushed to disk (`fsync`) after each
/// record, on a thread of its own (never the realtime thread, never under the player's locks):
/// - `base`: the file's text as the run read it;
/// - `edit`: the whole session text after each edit (undo and redo included);
/// - `state`: what the run added to the session's timeline (``SessionPlayer/RunState``: every
///   go on its sample, gain changes, pauses, stops, level changes, the playhead) after each
///   change, with the moment it was taken;
/// - `clock`: while the session plays, every ``clockInterval`` seconds, which session sample
///   played on which JACK frame at which wall-clock time — the last one bounds when a crash came;
/// - `end`: the run ended normally.
///
/// A record cut short by a crash does not read; the one before it stands.
public final class ShowJournal: @unchecked Sendable {
    /// Where the session is at a moment.
    public struct Moment: Sendable, Hashable, Codable {
        /// The session sample playing (the paused position while paused).
        public var position: Int64
        /// Whether the session plays (its position moves with the clock).
        public var isPlaying: Bool
        /// The JACK frame time `position` plays on (nil: no JACK clock).
        public var jackFrame: Int64?
        /// Wall-clock time: seconds since 1970.
        public var time: Double
        /// The session's rate for the run.
        public var rate: Double

        /// Creates a moment.
        public init(position: Int64, isPlaying: Bool, jackFrame: Int64?, time: Double, rate: Double) {
            self.position = position
            self.isPlaying = isPlaying
            self.jackFrame = jackFrame
            self.time = time
            self.rate = rate
        }
    }

    /// Seconds between two `clock` records while the session plays.
    public static let clockInterval = 0.1

    /// The journal file.
    public let path: String
    private let descriptor: Int32
    private let player: @Sendable () -> SessionPlayer
    private let moment: @Sendable (SessionPlayer) -> Moment
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let written = Atomic<Int>(0)
    /// What was written last, the player it came from, and the edits made before that player's
    /// (recovered, or made on a player a rate change replaced): the writer thread's own.
    private var lastText: String
    private var lastRun: SessionPlayer.RunState?
    private var lastClock = Date.distantPast
    private var lastPlayer: ObjectIdentifier?
    private var lastPlayerEdits = 0
    private var editsBefore: Int

    /// One record.
    struct Record: Codable {
        var kind: String
        var file: String
        var time: Double
        var text: String?
        /// Edits made so far (several made between two writes share a record).
        var edits: Int?
        var run: SessionPlayer.RunState?
        var moment: Moment?
    }

    /// The folder journals go in: `$XDG_STATE_HOME/lockstep/journals`, else
    /// `~/.local/state/lockstep/journals`.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/lockstep/journals" }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return home + "/.local/state/lockstep/journals"
    }

    /// The journal of session file `sessionPath` in `directory`: its name and a hash of its
    /// absolute path (`show-1f2e3d4c5b6a7988.journal`).
    public static func path(forSession sessionPath: String, in directory: String = defaultDirectory()) -> String {
        let absolute = URL(fileURLWithPath: sessionPath).standardizedFileURL.path
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in absolute.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        let name = URL(fileURLWithPath: absolute).deletingPathExtension().lastPathComponent
        return "\(directory)/\(name)-\(String(hash, radix: 16)).journal"
    }

    /// What a journal holds, read back.
    public struct Contents: Sendable {
        /// The journal.
        public var journal: String
        /// The session file's text when the run read it.
        public var base: String
        /// The session text with every edit made (the base when none was).
        public var text: String
        /// How many edits were journaled.
        public var edits: Int
        /// When the last edit was made (nil: none).
        public var lastEdit: Date?
        /// What the run had added when last journaled (nil: nothing journaled yet).
        public var run: SessionPlayer.RunState?
        /// The last moment journaled (a `state` or `clock` record).
        public var moment: Moment?
        /// Whether the run ended normally.
        public var ended: Bool
    }

    /// Reads the journal at `path` (nil when there is none or it holds no base).
    public static func read(at path: String) -> Contents? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        var contents: Contents?
        for line in data.split(separator: UInt8(ascii: "\n")) {
            guard let record = try? JSONDecoder().decode(Record.self, from: Data(line)) else { continue }
            switch record.kind {
            case "base":
                guard let text = record.text else { continue }
                contents = Contents(journal: path, base: text, text: text, edits: 0, run: nil, moment: nil, ended: false)
            case "edit":
                guard let text = record.text else { continue }
                contents?.text = text
                contents?.edits = max(1, record.edits ?? 1)
                contents?.lastEdit = Date(timeIntervalSince1970: record.time)
            case "state":
                contents?.run = record.run
                if let moment = record.moment { contents?.moment = moment }
            case "clock":
                if let moment = record.moment { contents?.moment = moment }
            case "end":
                contents?.ended = true
            default:
                continue
            }
        }
        return contents
    }

    /// Edits an earlier run journaled and did not save.
    public struct Pending: Sendable {
        /// The journal.
        public var journal: String
        /// The session text with every edit made.
        public var text: String
        /// How many edits were journaled.
        public var edits: Int
        /// When the last one was made.
        public var lastEdit: Date
    }

    /// The edits journaled at `path` that the session file (now holding `fileText`) does not hold:
    /// nil when there is no journal, no edit, every edit was saved, or the file changed since
    /// (then the journal is not of this text).
    public static func pending(at path: String, fileText: String) -> Pending? {
        guard let contents = read(at: path), contents.base == fileText, let lastEdit = contents.lastEdit,
              contents.text != fileText else { return nil }
        return Pending(journal: path, text: contents.text, edits: contents.edits, lastEdit: lastEdit)
    }

    /// Starts a journal at `path` (its folder made, readable by the user alone) for a run of the
    /// session file `file`, which holds `fileText`, whose player `player` gives — the current one,
    /// as a rate change replaces it — and whose moment `moment` takes. Edits already made
    /// (recovered from an earlier journal) and, for a resumed run, its state are written at once:
    /// the new journal replaces an earlier one at `path` atomically (written beside, flushed,
    /// renamed), so a crash while starting leaves one or the other whole. Call
    /// ``pending(at:fileText:)`` or ``read(at:)`` first.
    /// - Throws: a `CocoaError` saying why the journal cannot be written.
    public init(path: String, file: String, fileText: String, recovered: Int = 0,
                player: @escaping @Sendable () -> SessionPlayer,
                moment: @escaping @Sendable (SessionPlayer) -> Moment) throws {
        self.path = path
        self.player = player
        self.moment = moment
        lastText = fileText
        editsBefore = recovered
        let folder = (path as NSString).deletingLastPathComponent
        do {
            if !folder.isEmpty {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
        } catch {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path,
                NSLocalizedDescriptionKey: "cannot make the journal's folder \(folder): \(error.localizedDescription)"])
        }
        let beside = path + ".new"
        descriptor = open(beside, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path,
                NSLocalizedDescriptionKey: "cannot open the journal \(path): \(String(cString: strerror(errno)))"])
        }
        append(Record(kind: "base", file: file, time: Date().timeIntervalSince1970, text: fileText))
        writeChanges(of: player(), file: file)
        guard rename(beside, path) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            unlink(beside)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path,
                NSLocalizedDescriptionKey: "cannot write the journal \(path): \(reason)"])
        }
        let directory = open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 { fsync(directory); close(directory) }
        let thread = Thread { [self] in watch() }
        thread.name = "lockstep-journal"
        thread.start()
    }

    /// Edits journaled so far.
    public var edits: Int { written.load(ordering: .acquiring) }

    /// Writes what is not yet written and an `end` record, stops the thread and closes the
    /// journal; with `remove` (nothing left to recover: no edit, or every edit saved), deletes it.
    public func stop(remove: Bool = false) {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        player().changes.signal()
        finished.wait()
        append(Record(kind: "end", file: player().editedSession.document.path, time: Date().timeIntervalSince1970))
        close(descriptor)
        if remove { unlink(path) }
    }

    /// Whether the session file at `file` holds every edit journaled (it was saved since, or no
    /// edit was made).
    public func isSaved(in file: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: file) else { return false }
        return String(decoding: data, as: UTF8.self) == player().editedSession.text
    }

    private func watch() {
        while true {
            let current = player()
            let stop = stopping.load(ordering: .acquiring)
            writeChanges(of: current, file: current.editedSession.document.path)
            if stop { break }
            _ = current.changes.wait(until: Date().addingTimeInterval(Self.clockInterval)) { stopping.load(ordering: .acquiring) }
        }
        finished.signal()
    }

    /// Writes an `edit` record when the text changed, a `state` record when the run state did,
    /// and a `clock` record when the session plays and the last is ``clockInterval`` old.
    private func writeChanges(of current: SessionPlayer, file: String) {
        let text = current.editedSession.text
        if lastPlayer != ObjectIdentifier(current) {
            editsBefore += lastPlayerEdits
            lastPlayer = ObjectIdentifier(current)
        }
        lastPlayerEdits = current.editCount
        let now = Date()
        if text != lastText {
            append(Record(kind: "edit", file: file, time: now.timeIntervalSince1970, text: text, edits: editsBefore + lastPlayerEdits))
            lastText = text
            written.add(1, ordering: .releasing)
        }
        let run = current.runState()
        let moment = moment(current)
        if run != lastRun {
            append(Record(kind: "state", file: file, time: now.timeIntervalSince1970, run: run, moment: moment))
            lastRun = run
            lastClock = now
        } else if moment.isPlaying && now.timeIntervalSince(lastClock) >= Self.clockInterval * 0.9 {
            append(Record(kind: "clock", file: file, time: now.timeIntervalSince1970, moment: moment))
            lastClock = now
        }
    }

    /// Appends `record` as one line and flushes it to disk.
    private func append(_ record: Record) {
        guard var line = try? JSONEncoder().encode(record) else { return }
        line.append(UInt8(ascii: "\n"))
        line.withUnsafeBytes { bytes in
            var done = 0
            while done < bytes.count {
                let n = write(descriptor, bytes.baseAddress! + done, bytes.count - done)
                if n <= 0 { if errno == EINTR { continue } else { return } }
                done += n
            }
        }
        fsync(descriptor)
    }
}
