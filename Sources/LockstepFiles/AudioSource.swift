import Lockstep

/// A readable, seekable source of audio frames: what a layer plays from. ``AudioFileReader`` is
/// one; a test double (a generator, a source that notes the threads reading it) is another.
///
/// A source is used by one thread at a time (a layer's lane on a ``FileStreamer``, or the thread
/// rendering offline), never by the realtime thread.
public protocol AudioSource: AnyObject {
    /// Where the audio comes from, for messages (a file's path).
    var path: String { get }
    /// The audio's rate and channels (it is read as interleaved 32-bit float).
    var format: StreamFormat { get }
    /// The length in frames.
    var frameCount: Int64 { get }
    /// Why the audio ended before ``frameCount`` frames, when it did (a truncated file).
    var truncationError: FileError? { get }
    /// Reads up to `frames` frames from the position into `buffer` (interleaved float, the
    /// source's channels) and moves on; returns the frames read, 0 at the end.
    func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(FileError) -> Int
    /// Moves the position to frame `frame`.
    func seek(toFrame frame: Int64) throws(FileError)
    /// Lets the source go (a file is closed); nothing is read afterwards.
    func close()
    /// Whether the source is a stream (standard input on a pipe): read once, as it arrives, from
    /// its start; ``frameCount`` is `Int64.max` until its end. False unless the source says so.
    var isStream: Bool { get }
}

extension AudioSource {
    /// Not a stream.
    public var isStream: Bool { false }
}

extension AudioFileReader: AudioSource {}

/// Opens the source for a path: how a player gets its audio (``AudioSources/files`` reads files).
public typealias AudioSourceOpener = @Sendable (String) throws(FileError) -> any AudioSource

/// The usual ``AudioSourceOpener``s.
public enum AudioSources {
    /// Opens the file at the path with ``AudioFileReader``, refusing a truncated one.
    public static let files: AudioSourceOpener = { path throws(FileError) in
        try AudioFileReader(path: path, truncation: .reject)
    }
}
