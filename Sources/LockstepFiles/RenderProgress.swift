/// How far an offline render (``LayerMixdown``, a session render) has come: frames written of
/// the frames expected.
public struct RenderProgress: Sendable, Hashable {
    /// Frames written so far.
    public var frames: Int64
    /// Frames the render is expected to write (its length as known before it started).
    public var totalFrames: Int64
    /// The output's sample rate, to turn frames into seconds.
    public var sampleRate: Double

    /// Creates a progress report.
    public init(frames: Int64, totalFrames: Int64, sampleRate: Double) {
        self.frames = frames
        self.totalFrames = totalFrames
        self.sampleRate = sampleRate
    }

    /// The fraction done, 0…1.
    public var fraction: Double { totalFrames > 0 ? min(1, max(0, Double(frames) / Double(totalFrames))) : 0 }
    /// Seconds of audio written.
    public var seconds: Double { Double(frames) / sampleRate }
    /// Seconds of audio expected.
    public var totalSeconds: Double { Double(totalFrames) / sampleRate }
}
