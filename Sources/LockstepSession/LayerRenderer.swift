import Lockstep
import LockstepFiles

/// Computes one layer's audio, buffer after buffer, from the session timeline: every cue on the
/// layer that overlaps the buffer, with its envelope, mixed at its exact sample, then the layer's
/// gain and automation.
///
/// The audio is a pure function of session time, so a live run and an offline render of the same
/// session produce the same samples. Runs on the layer's lane of the player's streamer (live), or
/// where the queue hands its buffers back (offline); one thread at a time.
final class LayerRenderer {
    let layer: Int
    let channelCount: Int
    let rate: Double
    /// Cues starting within this many samples ahead are opened early, so opening a file never
    /// delays a refill.
    let lookahead: Int64
    /// The open cues, by cue (``SessionTimeline/Cue/id``) and placement (``SessionTimeline/Cue/instance``).
    private var sources: [SourceKey: CueSource] = [:]
    private struct SourceKey: Hashable {
        var id: Int
        var instance: Int
        init(_ cue: SessionTimeline.Cue) { (id, instance) = (cue.id, cue.instance) }
    }
    /// The indices of the layer's cues in the timeline, found at the first render of each
    /// ``SessionTimeline/structure``: each buffer then looks at its own cues only.
    private var cueIndices: [Int]?
    private var structure = 0
    /// A stretch of a cue's audio, read before it is mixed.
    private var scratch: [Float] = []
    /// The first file error met.
    private(set) var error: FileError?

    /// Opens a cue's audio.
    let open: AudioSourceOpener

    init(layer: Int, channelCount: Int, rate: Double, open: @escaping AudioSourceOpener) {
        self.layer = layer
        self.open = open
        self.channelCount = channelCount
        self.rate = rate
        lookahead = Int64(rate * 2)
    }

    /// Forgets every open cue (after a seek every cue is re-positioned from scratch).
    func reset() { sources.removeAll() }

    /// Writes session samples `[position, position + frames)` of the layer into `out`
    /// (interleaved, ``channelCount`` channels).
    func render(_ timeline: SessionTimeline, position: Int64, frames: Int, into out: UnsafeMutablePointer<Float>) {
        let channels = channelCount
        let end = position + Int64(frames)
        let layer = self.layer
        if cueIndices == nil || structure != timeline.structure {
            structure = timeline.structure
            cueIndices = timeline.cues.indices.filter { timeline.cues[$0].layer == layer && timeline.cues[$0].isAudio }
        }
        // `out` is cleared only when something is mixed into it, or nothing is: the first cue that
        // covers the whole buffer is read straight into it (one pass over the memory, not three).
        var cleared = false
        for cue in timeline.retired[layer] ?? [] { render(cue, position: position, end: end, into: out, cleared: &cleared) }
        for index in cueIndices! { render(timeline.cues[index], position: position, end: end, into: out, cleared: &cleared) }
        if !cleared { out.update(repeating: 0, count: frames * channels) }
        applyLayerGain(timeline, position: position, frames: frames, to: out)
        if let pause = timeline.pauseFade { applyPauseFade(from: pause, position: position, frames: frames, to: out) }
    }

    /// A pause's fade from session sample `start`: linear to silence over
    /// ``SessionPlayer/pauseFadeSeconds``, silence after.
    private func applyPauseFade(from start: Int64, position: Int64, frames: Int, to out: UnsafeMutablePointer<Float>) {
        let length = max(1, Int64((SessionPlayer.pauseFadeSeconds * rate).rounded()))
        let channels = channelCount
        for j in 0..<frames {
            let sample = position + Int64(j)
            guard sample >= start else { continue }
            let g = Float(max(0, 1 - Double(sample - start) / Double(length)))
            for c in 0..<channels { out[j * channels + c] *= g }
        }
    }

    /// Mixes what `cue` plays in session samples `[position, end)` into `out` (`cleared`: whether
    /// `out` holds this buffer's mix so far, or still what it held before).
    private func render(_ cue: SessionTimeline.Cue, position: Int64, end: Int64, into out: UnsafeMutablePointer<Float>,
                        cleared: inout Bool) {
        guard let start = cue.start, cue.isAudio else { return }
        let key = SourceKey(cue)
        let cueEnd = cue.end ?? .max
        if cueEnd <= position {
            // (A paused cue keeps its source: a resume plays on from where it stopped.)
            if !cue.awaitsResume { sources[key] = nil }
            return
        }
        if start >= end {
            if start - end < lookahead, cueEnd > start, sources[key] == nil { _ = source(for: cue) }
            return
        }
        let stretches = cue.soundingStretches(from: position, to: end)
        if stretches.isEmpty { return }
        guard let source = source(for: cue) else { return }
        for stretch in stretches {
            mix(cue.repeats == nil ? cue : cue.pass(stretch.pass), stretch, from: source, position: position, end: end,
                into: out, cleared: &cleared)
        }
        if let problem = source.error, error == nil { error = problem }
        if cueEnd <= end && !cue.awaitsResume { sources[key] = nil }
    }

    /// Reads one stretch of a cue from its source and mixes it into `out` (which starts at session
    /// sample `position`) with the cue's gain: one constant factor over steady runs, computed per
    /// sample only inside fades, crossfades, pause/stop fades and level ramps.
    private func mix(_ cue: SessionTimeline.Cue, _ stretch: SessionTimeline.Cue.Stretch, from source: CueSource,
                     position: Int64, end: Int64, into out: UnsafeMutablePointer<Float>, cleared: inout Bool) {
        let channels = channelCount
        let count = Int(stretch.to - stretch.from)
        let k0 = stretch.cueSample
        if source.position != k0 { source.seek(to: k0) }
        let sourceChannels = source.channelCount
        if !cleared {
            cleared = true
            if stretch.from == position && stretch.to == end && sourceChannels == channels {
                source.read(into: out, frames: count)
                applyGain(cue, stretch, to: out)
                return
            }
            out.update(repeating: 0, count: Int(end - position) * channels)
        }
        if scratch.count < count * sourceChannels { scratch = Array(repeating: 0, count: count * sourceChannels) }
        scratch.withUnsafeMutableBufferPointer { buffer in
            let samples = buffer.baseAddress!
            source.read(into: samples, frames: count)
            let offset = Int(stretch.from - position)
            Self.forEachGainRun(of: cue, over: stretch) { j, frames, gain in
                Self.mix(samples + j * sourceChannels, channels: sourceChannels, frames: frames, gain: gain,
                         into: out + (offset + j) * channels, outputChannels: channels)
            }
        }
    }

    /// Multiplies a stretch read straight into `out` (which starts at the stretch) by the cue's
    /// gain, as ``mix(_:_:from:position:end:into:cleared:)`` would have mixed it into silence.
    private func applyGain(_ cue: SessionTimeline.Cue, _ stretch: SessionTimeline.Cue.Stretch, to out: UnsafeMutablePointer<Float>) {
        let channels = channelCount
        Self.forEachGainRun(of: cue, over: stretch) { j, frames, gain in
            guard gain != 1 else { return }
            let samples = out + j * channels
            for i in 0..<(frames * channels) { samples[i] = 0 + samples[i] * gain }
        }
    }

    /// Calls `body` with each run of the stretch's frames (its first frame's index in the
    /// stretch, its length) and the cue's gain over it: one constant factor over steady runs,
    /// frame by frame inside fades, crossfades, pause/stop fades and level ramps.
    @inline(__always)
    private static func forEachGainRun(of cue: SessionTimeline.Cue, over stretch: SessionTimeline.Cue.Stretch,
                                       _ body: (_ j: Int, _ frames: Int, _ gain: Float) -> Void) {
        let count = Int(stretch.to - stretch.from)
        var j = 0
        while j < count {
            let sample = stretch.from + Int64(j), k = stretch.cueSample + Int64(j)
            let run = Int(cue.steadyRun(at: sample, cueSample: k, limit: Int64(count - j)))
            if run > 0 {
                body(j, run, Float(SessionGain.linear(cue.levelDB(at: sample))))
                j += run
            } else {
                body(j, 1, Float(cue.gain(at: sample, cueSample: k)))
                j += 1
            }
        }
    }

    /// Adds `frames` frames of `channels`-channel audio, times `gain`, to `out`: mono on every
    /// output channel, otherwise channel to channel (extra output channels untouched).
    @inline(__always)
    static func mix(_ input: UnsafePointer<Float>, channels: Int, frames: Int, gain: Float,
                    into out: UnsafeMutablePointer<Float>, outputChannels: Int) {
        if channels == 1 {
            if outputChannels == 1 {
                for i in 0..<frames { out[i] += input[i] * gain }
            } else if outputChannels == 2 {
                for i in 0..<frames {
                    let v = input[i] * gain
                    out[2 * i] += v
                    out[2 * i + 1] += v
                }
            } else {
                for i in 0..<frames {
                    let v = input[i] * gain
                    for c in 0..<outputChannels { out[i * outputChannels + c] += v }
                }
            }
        } else if channels == outputChannels {
            for i in 0..<(frames * channels) { out[i] += input[i] * gain }
        } else {
            let shared = min(channels, outputChannels)
            for i in 0..<frames {
                for c in 0..<shared { out[i * outputChannels + c] += input[i * channels + c] * gain }
            }
        }
    }

    private func applyLayerGain(_ timeline: SessionTimeline, position: Int64, frames: Int, to out: UnsafeMutablePointer<Float>) {
        let channels = channelCount
        let end = position + Int64(frames)
        let changes = timeline.automation[layer].contains { $0.start < end && $0.start + max(1, $0.ramp) > position }
        if !changes {
            let g = Float(SessionGain.linear(timeline.layerGainDB(layer, at: position)))
            if g == 1 { return }
            for i in 0..<(frames * channels) { out[i] *= g }
            return
        }
        for j in 0..<frames {
            let g = Float(SessionGain.linear(timeline.layerGainDB(layer, at: position + Int64(j))))
            for c in 0..<channels { out[j * channels + c] *= g }
        }
    }

    private func source(for cue: SessionTimeline.Cue) -> CueSource? {
        if let existing = sources[SourceKey(cue)] { return existing }
        do {
            let source = try CueSource(cue: cue, rate: rate, open: open)
            sources[SourceKey(cue)] = source
            return source
        } catch {
            if self.error == nil { self.error = error }
            return nil
        }
    }
}
