import Lockstep
import LockstepFiles

/// Computes one layer's audio, buffer after buffer, from the session timeline: every cue on the
/// layer that overlaps the buffer, with its envelope, mixed at its exact sample, then the layer's
/// gain and automation.
///
/// The audio is a pure function of session time, so a live run and an offline render of the same
/// session produce the same samples. Runs on the engine's callback thread.
final class LayerRenderer {
    let layer: Int
    let channelCount: Int
    let rate: Double
    /// Cues starting within this many samples ahead are opened early, so opening a file never
    /// delays a refill.
    let lookahead: Int64
    private var sources: [Int: CueSource] = [:]
    private var scratch: [Float] = []
    /// The first file error met.
    private(set) var error: FileError?

    init(layer: Int, channelCount: Int, rate: Double) {
        self.layer = layer
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
        out.update(repeating: 0, count: frames * channels)
        let end = position + Int64(frames)
        for cue in timeline.cues where cue.layer == layer {
            guard let start = cue.start else { continue }
            let cueEnd = cue.end ?? .max
            if cueEnd <= position {
                sources[cue.index] = nil
                continue
            }
            if start >= end {
                if start - end < lookahead, sources[cue.index] == nil { _ = source(for: cue) }
                continue
            }
            let from = max(position, start)
            let to = min(end, cueEnd)
            let count = Int(to - from)
            guard let source = source(for: cue) else { continue }
            let k0 = from - start
            if source.position != k0 { source.seek(to: k0) }
            let needed = count * cue.fileChannels
            if scratch.count < needed { scratch = Array(repeating: 0, count: needed) }
            let gain = SessionGain.linear(cue.gainDB)
            scratch.withUnsafeMutableBufferPointer { buffer in
                let samples = buffer.baseAddress!
                source.read(into: samples, frames: count)
                let offset = Int(from - position)
                for j in 0..<count {
                    let k = k0 + Int64(j)
                    let g = Float(Self.isInsideEnvelope(cue, k) ? gain : gain * SessionTimeline.envelope(cue, at: k))
                    let target = out + (offset + j) * channels
                    let frame = samples + j * cue.fileChannels
                    if cue.fileChannels == 1 {
                        let value = frame[0] * g
                        for c in 0..<channels { target[c] += value }
                    } else {
                        for c in 0..<min(channels, cue.fileChannels) { target[c] += frame[c] * g }
                    }
                }
            }
            if let problem = source.error, error == nil { error = problem }
            if cueEnd <= end { sources[cue.index] = nil }
        }
        applyLayerGain(timeline, position: position, frames: frames, to: out)
    }

    /// Whether sample `k` of the cue is outside every fade (its envelope is exactly 1).
    @inline(__always)
    static func isInsideEnvelope(_ cue: SessionTimeline.Cue, _ k: Int64) -> Bool {
        if k < cue.fadeIn || k < cue.crossfadeIn { return false }
        if let length = cue.length, k >= length - max(cue.fadeOut, cue.crossfadeOut) { return false }
        return true
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
        if let existing = sources[cue.index] { return existing }
        do {
            let source = try CueSource(cue: cue, rate: rate)
            sources[cue.index] = source
            return source
        } catch {
            if self.error == nil { self.error = error }
            return nil
        }
    }
}
