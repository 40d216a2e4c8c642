import Synchronization

/// A problem in an input file that Lockstep worked around instead of refusing the file: the
/// command goes on, and the warning is reported once per file and kind.
///
/// ``AudioFileReader`` records them in a ``FileWarnings`` collector (``FileWarnings/shared``
/// unless told otherwise) as it opens and decodes files, wherever that happens — a render's
/// layers, a session's cues on the streaming thread, `info`'s scan — so a command reports them
/// all at its end. ``message`` names the file, says what was done and what to do.
public struct FileWarning: Sendable, Hashable, CustomStringConvertible {
    /// The kinds of worked-around problem.
    public enum Kind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// The audio data ends inside a frame: the bytes of that partial frame are ignored and
        /// the whole frames before it play. ``FileWarning/count`` is the number of bytes ignored.
        case partialFrame
        /// Samples that were NaN or ±infinity (in a float file) were replaced by silence (0).
        /// ``FileWarning/count`` is the number of samples replaced.
        case nonFiniteSamples
        /// The file holds less audio than it declares and was used anyway (a reader opened with
        /// ``AudioFileReader/TruncationPolicy/tolerate``, as `render --accept-truncated` does).
        /// ``FileWarning/count`` is the number of frames present.
        case truncated
        /// Channels of the file reach no output: a channel map leaves them out, or the default
        /// downmix drops them (BS.775 drops the LFE channel). ``FileWarning/count`` is the number
        /// of channels dropped.
        case droppedChannels

        /// The case name, such as `partialFrame`.
        public var description: String { rawValue }
    }

    /// What was worked around.
    public var kind: Kind
    /// The file concerned, as the caller gave its path.
    public var path: String
    /// Bytes ignored (``Kind/partialFrame``), samples replaced (``Kind/nonFiniteSamples``) or
    /// frames present (``Kind/truncated``).
    public var count: Int64
    /// A sentence naming the file, what was done and what to do.
    public var message: String

    /// Creates a warning; `message` should name the file (use ``FileError/describe(_:)``).
    public init(_ kind: Kind, path: String, count: Int64, message: String) {
        self.kind = kind
        self.path = path
        self.count = count
        self.message = message
    }

    /// The warning for a file whose data ends `bytes` bytes into a frame, after `frames` whole frames.
    public static func partialFrame(path: String, bytes: Int, frames: Int64) -> FileWarning {
        FileWarning(.partialFrame, path: path, count: Int64(bytes),
            message: FileError.describe(path) + "ends inside a frame: \(bytes) \(bytes == 1 ? "byte" : "bytes") of a partial frame ignored, "
                + "the \(frames) whole frames play; re-export or re-copy the file if it should be longer")
    }

    /// The warning for a file in which `count` non-finite samples were replaced by silence.
    public static func nonFiniteSamples(path: String, count: Int64) -> FileWarning {
        FileWarning(.nonFiniteSamples, path: path, count: count,
            message: FileError.describe(path) + "\(count) non-finite \(count == 1 ? "sample" : "samples") (NaN or infinity) replaced by silence; "
                + "re-export the file, or check the plug-in or converter that wrote it")
    }

    /// The warning for a truncated file of which the `frames` frames present were used.
    public static func truncated(_ error: FileError, frames: Int64) -> FileWarning {
        FileWarning(.truncated, path: error.path, count: frames,
                    message: error.message + "; using the \(frames) frames it holds")
    }

    /// The warning for a file whose `channels` (from 1) reach no output through `matrix`.
    public static func droppedChannels(path: String, channels: [Int], matrix: ChannelMatrix) -> FileWarning {
        let list = channels.map(String.init).joined(separator: ", ")
        let them = channels.count == 1 ? "it" : "them"
        return FileWarning(.droppedChannels, path: path, count: Int64(channels.count),
            message: FileError.describe(path) + "\(channels.count == 1 ? "channel" : "channels") \(list) of \(matrix.inputCount) not heard (\(matrix.rule)); "
                + "route \(them) with a channel map to keep \(them)")
    }

    /// The message.
    public var description: String { message }
}

/// Collects ``FileWarning``s, one per file and kind, in the order they were first found.
///
/// A later warning of the same file and kind with a larger ``FileWarning/count`` replaces the
/// earlier one (a reader that decodes further finds more non-finite samples; several readers of
/// one file report the most any of them found), so each file is reported once with its count.
///
/// Thread safety: every method may be called from any thread (readers decode on streaming
/// threads), but not from a realtime one (it takes a lock).
public final class FileWarnings: Sendable {
    /// The collector readers use unless given another: the command-line tool reports its
    /// contents when a command ends.
    public static let shared = FileWarnings()

    private struct Key: Hashable {
        var path: String
        var kind: FileWarning.Kind
    }

    private struct State {
        var warnings: [FileWarning] = []
        var index: [Key: Int] = [:]
    }

    private let state = Mutex(State())

    /// Creates an empty collector.
    public init() {}

    /// Adds `warning`, or raises the count of the one already held for its file and kind.
    public func record(_ warning: FileWarning) {
        state.withLock { state in
            let key = Key(path: warning.path, kind: warning.kind)
            if let at = state.index[key] {
                if warning.count > state.warnings[at].count { state.warnings[at] = warning }
            } else {
                state.index[key] = state.warnings.count
                state.warnings.append(warning)
            }
        }
    }

    /// Every warning held, in the order first found.
    public var all: [FileWarning] { state.withLock { $0.warnings } }

    /// The warning held for `path` of `kind`, if any.
    public func warning(for path: String, kind: FileWarning.Kind) -> FileWarning? {
        state.withLock { state in state.index[Key(path: path, kind: kind)].map { state.warnings[$0] } }
    }

    /// Removes every warning.
    public func removeAll() {
        state.withLock { $0 = State() }
    }
}
