/// The error every audio-file operation in `LockstepFiles` throws.
///
/// A `FileError` names the file it is about and says, in one sentence, what is wrong with it and
/// what to do, for example
/// `song.wav: not an audio file libsndfile can read (Format not recognised.); convert it to WAV or FLAC`.
/// ``kind`` lets code react to the category of failure without parsing ``message``.
public struct FileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The category of a file failure.
    public enum Kind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// The file (or a folder on its path) does not exist.
        case notFound
        /// The file or a folder on its path cannot be read (or written) by this user.
        case permissionDenied
        /// The path names a directory, a FIFO (named pipe), a device or a socket where an audio file
        /// was expected; such paths are refused before they are read.
        case notAFile
        /// The file exists but holds zero bytes (or, for `lockstep info`, a valid header and no
        /// audio frames).
        case emptyFile
        /// The file is not in a format libsndfile can decode.
        case unsupportedFormat
        /// The file is in a known format but its structure is damaged.
        case corrupt
        /// The file holds less audio than its header declares, or its audio data stops early.
        case truncated
        /// The output file cannot be created: its folder is missing or not writable, or the path
        /// names a directory or a read-only file.
        case unwritableOutput
        /// The output container cannot store the requested sample format, or the file type
        /// cannot be written at all.
        case unsupportedOutputFormat
        /// Reading, writing, seeking, renaming or closing failed at the operating-system or
        /// codec level.
        case ioError
        /// A value given with the file is out of range (a region outside the file, a play count
        /// below 1, …) or an operation was used in the wrong state.
        case invalidArgument

        /// The case name, such as `notFound`.
        public var description: String { rawValue }
    }

    /// The category of the failure.
    public var kind: Kind
    /// The path of the file concerned, as the caller gave it (empty when no file is involved).
    public var path: String
    /// A sentence naming the file, what is wrong and what to do.
    public var message: String
    /// libsndfile's own error code (`sf_error`: `SF_ERR_UNRECOGNISED_FORMAT`, `SF_ERR_SYSTEM`,
    /// `SF_ERR_MALFORMED_FILE`, `SF_ERR_UNSUPPORTED_ENCODING`, or a codec's code above those) when
    /// libsndfile reported the failure; nil otherwise.
    public var libsndfileCode: Int32?

    /// Creates an error from a kind, the path concerned and a complete message.
    ///
    /// The message is used as is; it should already name the file (see ``describe(_:)``).
    public init(_ kind: Kind, path: String, message: String, libsndfileCode: Int32? = nil) {
        self.kind = kind
        self.path = path
        self.message = message
        self.libsndfileCode = libsndfileCode
    }

    /// Creates an error whose message is `"<path>: <problem>"`, or just `problem` when `path` is empty.
    public init(_ kind: Kind, path: String, problem: String, libsndfileCode: Int32? = nil) {
        self.init(kind, path: path, message: Self.describe(path) + problem, libsndfileCode: libsndfileCode)
    }

    /// The message, which names the file and says what to do.
    public var description: String { message }

    /// The prefix used to name a file in messages: `"<path>: "`, or nothing for an empty path.
    public static func describe(_ path: String) -> String {
        path.isEmpty ? "" : "\(path): "
    }
}
