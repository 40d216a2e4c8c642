import CRealtime
import Synchronization

/// Mixing a queue's audio into the outputs, and metering it.
extension RenderCore {
    /// Mixes `frames` frames of `seg` starting at `position` into the output at offset `at`,
    /// applying the gain ramp and channel map, and meters the queue.
    @inline(__always)
    func mix(_ q: UnsafeMutablePointer<QueueRenderState>, _ seg: UnsafeMutablePointer<Segment>,
             from position: Int, frames: Int, into output: UnsafePointer<UnsafeMutablePointer<Float>>,
             at offset: Int, deviceTime: Int64) {
        let qc = seg.pointee.channelCount
        let source = UnsafePointer(seg.pointee.samples + position * qc)
        let metering = q.pointee.meteringEnabled.load(ordering: .relaxed)
        let toMaster = q.pointee.seenRoute & 1 == 0

        // Pan applies to mono and stereo queues on a device of two or more channels.
        let panned = qc <= 2 && channelCount >= 2
            && (q.pointee.panRemaining > 0 || q.pointee.panLeft != 1 || q.pointee.panRight != 1)
        if q.pointee.rampRemaining == 0 && !panned {
            // Steady gain: one scalar for the whole chunk.
            let g = q.pointee.gain
            if qc == 2 && channelCount >= 2 && g != 0 && toMaster && metering {
                mixAndMeterStereo(q, source, frames: frames, gain: g, into: output, at: offset, deviceTime: deviceTime)
                return
            }
            if g != 0 && toMaster { mixSteady(source, channels: qc, frames: frames, gain: g, into: output, at: offset) }
            if metering { meterSteady(q, source, channels: qc, frames: frames, gain: g, at: deviceTime) }
            return
        }

        // Ramping (or panned): per-frame gains for this chunk.
        var gain = q.pointee.gain
        var remaining = q.pointee.rampRemaining
        let step = q.pointee.rampStep
        for i in 0..<frames {
            if remaining > 0 {
                remaining -= 1
                gain = remaining == 0 ? q.pointee.gainTarget : gain + step
            }
            gainScratch[i] = gain
        }
        q.pointee.gain = gain
        q.pointee.rampRemaining = remaining

        if panned {
            mixPanned(q, source, channels: qc, frames: frames, into: toMaster ? output : nil, at: offset)
        }
        let targets = toMaster && !panned ? (qc == 1 ? min(2, channelCount) : min(qc, channelCount)) : 0
        for c in 0..<targets {
            let out = output[c] + offset
            var p = source + (qc == 1 ? 0 : c)
            for i in 0..<frames {
                out[i] += p.pointee * gainScratch[i]
                p += qc
            }
        }
        if metering {
            for c in 0..<qc {
                var sum: Float = 0
                var peak = q.pointee.meter.peaks[c]
                var p = source + c
                for i in 0..<frames {
                    let v = p.pointee * gainScratch[i]
                    sum += v * v
                    let a = abs(v)
                    if a > peak { peak = a }
                    p += qc
                }
                q.pointee.meter.sumSquares[c] += sum
                q.pointee.meter.peaks[c] = peak
            }
            q.pointee.meter.finishPlanar(frames: frames, at: deviceTime)
        }
    }

    /// Adds a mono or stereo chunk to outputs 1 and 2 with the per-frame gains in `gainScratch`
    /// and the pan gains (ramping them); with no `output` it only advances the pan ramp.
    @inline(__always)
    func mixPanned(_ q: UnsafeMutablePointer<QueueRenderState>, _ source: UnsafePointer<Float>, channels qc: Int,
                   frames: Int, into output: UnsafePointer<UnsafeMutablePointer<Float>>?, at offset: Int) {
        var left = q.pointee.panLeft
        var right = q.pointee.panRight
        var remaining = q.pointee.panRemaining
        let stepLeft = q.pointee.panStepLeft
        let stepRight = q.pointee.panStepRight
        if let output {
            let out0 = output[0] + offset
            let out1 = output[1] + offset
            for i in 0..<frames {
                if remaining > 0 {
                    remaining -= 1
                    left = remaining == 0 ? q.pointee.panTargetLeft : left + stepLeft
                    right = remaining == 0 ? q.pointee.panTargetRight : right + stepRight
                }
                let g = gainScratch[i]
                if qc == 1 {
                    let v = source[i] * g
                    out0[i] += v * left
                    out1[i] += v * right
                } else {
                    out0[i] += source[2 * i] * g * left
                    out1[i] += source[2 * i + 1] * g * right
                }
            }
        } else if remaining > 0 {
            let n = min(frames, remaining)
            remaining -= n
            left = remaining == 0 ? q.pointee.panTargetLeft : left + stepLeft * Float(n)
            right = remaining == 0 ? q.pointee.panTargetRight : right + stepRight * Float(n)
        }
        q.pointee.panLeft = left
        q.pointee.panRight = right
        q.pointee.panRemaining = remaining
    }

    /// Adds a chunk to the queue's own (direct) outputs: channel i to output i, with the same
    /// gains the master mix used (`gainScratch` still holds a ramp's per-frame gains).
    @inline(__always)
    func mixDirect(_ q: UnsafeMutablePointer<QueueRenderState>, _ seg: UnsafeMutablePointer<Segment>,
                   from position: Int, frames: Int, into direct: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
                   at offset: Int, ramped: Bool, gain: Float) {
        let qc = seg.pointee.channelCount
        let source = seg.pointee.samples + position * qc
        for c in 0..<qc {
            guard let out = direct[c] else { continue }
            var p = source + c
            if ramped {
                for i in 0..<frames {
                    out[offset + i] += p.pointee * gainScratch[i]
                    p += qc
                }
            } else {
                for i in 0..<frames {
                    out[offset + i] += p.pointee * gain
                    p += qc
                }
            }
        }
    }

    /// Adds `frames` frames of interleaved `source` × `gain` into the planar output, mapping
    /// channels (mono to the first two, otherwise by index).
    @inline(__always)
    func mixSteady(_ source: UnsafePointer<Float>, channels qc: Int, frames: Int, gain g: Float,
                   into output: UnsafePointer<UnsafeMutablePointer<Float>>, at offset: Int) {
        if qc == 1 {
            let out0 = output[0] + offset
            if channelCount >= 2 {
                let out1 = output[1] + offset
                for i in 0..<frames {
                    let v = source[i] * g
                    out0[i] += v
                    out1[i] += v
                }
            } else {
                for i in 0..<frames { out0[i] += source[i] * g }
            }
        } else if qc == 2 && channelCount >= 2 {
            // Four frames at a time: the left and right halves of eight interleaved samples.
            let raw = UnsafeRawPointer(source)
            let left = UnsafeMutableRawPointer(output[0] + offset)
            let right = UnsafeMutableRawPointer(output[1] + offset)
            var i = 0
            while i + 4 <= frames {
                let v = raw.loadUnaligned(fromByteOffset: 8 * i, as: SIMD8<Float>.self)
                left.storeBytes(of: left.loadUnaligned(fromByteOffset: 4 * i, as: SIMD4<Float>.self) + v.evenHalf * g,
                                toByteOffset: 4 * i, as: SIMD4<Float>.self)
                right.storeBytes(of: right.loadUnaligned(fromByteOffset: 4 * i, as: SIMD4<Float>.self) + v.oddHalf * g,
                                 toByteOffset: 4 * i, as: SIMD4<Float>.self)
                i += 4
            }
            let out0 = output[0] + offset
            let out1 = output[1] + offset
            while i < frames {
                out0[i] += source[2 * i] * g
                out1[i] += source[2 * i + 1] * g
                i += 1
            }
        } else {
            for c in 0..<min(qc, channelCount) {
                let out = output[c] + offset
                var p = source + c
                for i in 0..<frames {
                    out[i] += p.pointee * g
                    p += qc
                }
            }
        }
    }

    /// Mixes and meters a steady-gain stereo chunk in one pass over its samples (the common case
    /// at thousands of layers): four frames at a time, the left and right halves added to outputs
    /// 1 and 2, squares summed and magnitudes maxed lane by lane (even lanes left, odd right).
    @inline(__always)
    func mixAndMeterStereo(_ q: UnsafeMutablePointer<QueueRenderState>, _ source: UnsafePointer<Float>, frames: Int,
                           gain g: Float, into output: UnsafePointer<UnsafeMutablePointer<Float>>, at offset: Int,
                           deviceTime: Int64) {
        let raw = UnsafeRawPointer(source)
        let out0 = UnsafeMutableRawPointer(output[0] + offset)
        let out1 = UnsafeMutableRawPointer(output[1] + offset)
        var squares = SIMD8<Float>(), peaks = SIMD8<Float>()
        var i = 0
        while i + 4 <= frames {
            let v = raw.loadUnaligned(fromByteOffset: 8 * i, as: SIMD8<Float>.self)
            let left = out0.loadUnaligned(fromByteOffset: 4 * i, as: SIMD4<Float>.self) + v.evenHalf * g
            let right = out1.loadUnaligned(fromByteOffset: 4 * i, as: SIMD4<Float>.self) + v.oddHalf * g
            out0.storeBytes(of: left, toByteOffset: 4 * i, as: SIMD4<Float>.self)
            out1.storeBytes(of: right, toByteOffset: 4 * i, as: SIMD4<Float>.self)
            squares += v * v
            let magnitude = v.replacing(with: -v, where: v .< 0)
            peaks.replace(with: magnitude, where: magnitude .> peaks)
            i += 4
        }
        let o0 = output[0] + offset, o1 = output[1] + offset
        for k in i..<frames {
            o0[k] += source[2 * k] * g
            o1[k] += source[2 * k + 1] * g
        }
        finishStereoMeter(q, squares: squares, peaks: peaks, tail: source + 2 * i, tailFrames: frames - i,
                          frames: frames, gain: g, at: deviceTime)
    }

    /// Ends the metering of a steady-gain stereo chunk: folds the eight lanes (even left, odd
    /// right), adds the frames after the last whole group of four (`tail`), scales by the gain and
    /// adds it all to the queue's meter.
    @inline(__always)
    func finishStereoMeter(_ q: UnsafeMutablePointer<QueueRenderState>, squares: SIMD8<Float>, peaks: SIMD8<Float>,
                           tail: UnsafePointer<Float>, tailFrames: Int, frames: Int, gain g: Float, at deviceTime: Int64) {
        var s0 = squares[0] + squares[2] + squares[4] + squares[6]
        var s1 = squares[1] + squares[3] + squares[5] + squares[7]
        var p0 = max(max(peaks[0], peaks[2]), max(peaks[4], peaks[6]))
        var p1 = max(max(peaks[1], peaks[3]), max(peaks[5], peaks[7]))
        for k in 0..<tailFrames {
            let a = tail[2 * k], b = tail[2 * k + 1]
            s0 += a * a; s1 += b * b
            p0 = max(p0, abs(a)); p1 = max(p1, abs(b))
        }
        let gg = g * g, ag = abs(g)
        q.pointee.meter.sumSquares[0] += s0 * gg
        q.pointee.meter.sumSquares[1] += s1 * gg
        q.pointee.meter.peaks[0] = max(q.pointee.meter.peaks[0], p0 * ag)
        q.pointee.meter.peaks[1] = max(q.pointee.meter.peaks[1], p1 * ag)
        q.pointee.meter.finishPlanar(frames: frames, at: deviceTime)
    }

    /// Meters a steady-gain chunk. Independent accumulators per channel (and two per channel for
    /// mono and stereo) keep the additions from waiting on each other.
    @inline(__always)
    func meterSteady(_ q: UnsafeMutablePointer<QueueRenderState>, _ source: UnsafePointer<Float>, channels qc: Int,
                     frames: Int, gain g: Float, at deviceTime: Int64) {
        if qc == 2 {
            // Eight interleaved samples at a time (even lanes left, odd lanes right): squares
            // summed and magnitudes maxed lane by lane, which the compiler keeps in vector registers.
            let raw = UnsafeRawPointer(source)
            let count = 2 * frames
            var squares = SIMD8<Float>(), peaks = SIMD8<Float>()
            var k = 0
            while k + 8 <= count {
                let v = raw.loadUnaligned(fromByteOffset: 4 * k, as: SIMD8<Float>.self)
                squares += v * v
                let magnitude = v.replacing(with: -v, where: v .< 0)
                peaks.replace(with: magnitude, where: magnitude .> peaks)
                k += 8
            }
            finishStereoMeter(q, squares: squares, peaks: peaks, tail: source + k, tailFrames: (count - k) / 2,
                              frames: frames, gain: g, at: deviceTime)
            return
        } else {
            for c in 0..<qc {
                var sumA: Float = 0, sumB: Float = 0
                var high: Float = 0, low: Float = 0
                var p = source + c
                var i = 0
                while i + 1 < frames {
                    let a = p.pointee, b = (p + qc).pointee
                    sumA += a * a; sumB += b * b
                    high = max(high, max(a, b)); low = min(low, min(a, b))
                    p += 2 * qc
                    i += 2
                }
                if i < frames {
                    let a = p.pointee
                    sumA += a * a
                    high = max(high, a); low = min(low, a)
                }
                q.pointee.meter.sumSquares[c] += (sumA + sumB) * g * g
                q.pointee.meter.peaks[c] = max(q.pointee.meter.peaks[c], max(high, -low) * abs(g))
            }
        }
        q.pointee.meter.finishPlanar(frames: frames, at: deviceTime)
    }

    /// Counts silent frames into the meter window so levels fall to zero in gaps.
    @inline(__always)
    func meterSilence(_ q: UnsafeMutablePointer<QueueRenderState>, frames: Int, at deviceTime: Int64) {
        if q.pointee.meteringEnabled.load(ordering: .relaxed) {
            q.pointee.meter.finishPlanar(frames: frames, at: deviceTime)
        }
    }

    @inline(__always)
    func publishClock(_ q: UnsafeMutablePointer<QueueRenderState>, deviceTime: Int64) {
        let queueTime = q.pointee.queueTime
        let runState = q.pointee.runState.rawValue
        q.pointee.clockLock.write {
            q.pointee.publishedQueueTime.store(queueTime, ordering: .relaxed)
            q.pointee.publishedDeviceTime.store(deviceTime, ordering: .relaxed)
            q.pointee.publishedRunState.store(runState, ordering: .relaxed)
        }
    }
}
