/// A streaming sample-rate converter for interleaved 32-bit float audio.
///
/// The core stays free of C; `LockstepFiles` provides `SoxrRateConverter` (libsoxr). An
/// ``Engine`` is given a ``SampleRateConverterFactory`` and creates one converter per queue whose
/// rate differs from the device's. Converters run on the thread that enqueues buffers, never on
/// the render thread.
///
/// Implementations must be *latency-compensated*: output frame `k` corresponds to input time
/// `k / ratio`, so an impulse at input frame `n` appears at output frame `n × ratio`. The filter
/// delay is absorbed at the start and released by ``flush(into:capacity:)`` at the end.
public protocol SampleRateConverter: AnyObject {
    /// Converts `inputFrames` frames and writes as many output frames as are ready.
    ///
    /// - Returns: the number of frames written to `output` (at most `capacity`).
    func process(_ input: UnsafePointer<Float>, frames inputFrames: Int,
                 into output: UnsafeMutablePointer<Float>, capacity: Int) -> Int

    /// Ends the stream: writes every frame still held in the filter.
    ///
    /// After a flush the converter starts a new stream (as after ``reset()``).
    /// - Returns: the number of frames written (at most `capacity`).
    func flush(into output: UnsafeMutablePointer<Float>, capacity: Int) -> Int

    /// Discards the converter's state and starts a new stream.
    func reset()

    /// An upper bound on the frames ``flush(into:capacity:)`` can return, and on how many more
    /// (or fewer) frames than `inputFrames × ratio` one ``process(_:frames:into:capacity:)`` call
    /// can return.
    var maximumLatencyFrames: Int { get }
}

/// Creates sample-rate converters: `(inputRate, outputRate, channelCount) throws -> converter`.
public typealias SampleRateConverterFactory =
    @Sendable (_ inputRate: Double, _ outputRate: Double, _ channelCount: Int) throws -> any SampleRateConverter
