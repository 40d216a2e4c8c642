import Lockstep
import LockstepFiles

/// A cue's audio at the session's rate: its file region, looped as asked, rate-converted when the
/// file's rate differs, read sample by sample from any position of the cue.
///
/// Runs where its layer is computed (it reads files): a streamer's thread live, the rendering
/// thread offline; never on the realtime thread or the engine's callback thread of a live run.
final class CueSource {
    let cue: SessionTimeline.Cue
    let rate: Double
    private let stream: RegionStream
    /// Channels per frame read: the cue's channel matrix's outputs, or the file's channels.
    var channelCount: Int { stream.outputChannels }
    /// The next cue sample ``read(into:frames:)`` produces (silence past the end counts).
    private(set) var position: Int64 = 0
    /// The first error met while reading (the rest of the cue plays as silence).
    var error: FileError? { stream.error }

    init(cue: SessionTimeline.Cue, rate: Double, open: AudioSourceOpener) throws(FileError) {
        self.cue = cue
        self.rate = rate
        let source = try open(cue.path)
        do {
            // Reads of 2048 frames or more go straight into the layer's buffer (a live layer's
            // buffers are 2048 frames: one copy less, 12 % of the CPU of 4096 layers); shorter
            // ones (`session render` asks 1024 at a time) through a block of 2048, which costs
            // it no more than blocks of 8192 did (256 layers, 60 s: 2.7–3.0 s either way).
            stream = try RegionStream(source: source, region: cue.regionStart..<cue.regionEnd, playCount: cue.playCount,
                                      outputRate: rate, channelMatrix: cue.channelMatrix, readBlockFrames: 2048)
        } catch {
            source.close()
            throw error
        }
    }

    deinit { stream.source.close() }

    /// Moves to sample `k` of the cue (at the session's rate); see ``RegionStream/seek(to:)``.
    func seek(to k: Int64) {
        stream.seek(to: k)
        position = k
    }

    /// Writes the next `frames` cue samples (interleaved, ``channelCount`` channels) to `out`;
    /// past the cue's end, or after an error, it writes silence.
    func read(into out: UnsafeMutablePointer<Float>, frames: Int) {
        let done = stream.read(into: out, frames: frames)
        position += Int64(frames)
        if done < frames { (out + done * channelCount).update(repeating: 0, count: (frames - done) * channelCount) }
    }
}
