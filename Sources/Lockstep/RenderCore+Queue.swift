import CRealtime
import Synchronization

/// One queue's cycle: its commands, segments, truncation and stops.
extension RenderCore {
    @inline(__always)
    func renderQueue(_ q: UnsafeMutablePointer<QueueRenderState>, frames n: Int, t0: Int64,
                     output: UnsafePointer<UnsafeMutablePointer<Float>>) {
        applyCommands(q, t0: t0)
        if q.pointee.removed { return }
        let route = q.pointee.routeRequest.load(ordering: .acquiring)
        if route != q.pointee.seenRoute {
            // A new route: master mix and direct outputs change on this cycle's first frame.
            q.pointee.seenRoute = route
            q.pointee.routeAppliedAt.store(t0, ordering: .relaxed)
            q.pointee.routeAppliedGeneration.store(route >> 2, ordering: .releasing)
        }
        let skipped = q.pointee.renderedUntil >= 0 ? t0 - q.pointee.renderedUntil : 0
        q.pointee.renderedUntil = t0 + Int64(n)
        if skipped > 0 && q.pointee.runState == .running && !q.pointee.playsLateInFull.load(ordering: .relaxed) {
            // The device's clock skipped frames (an xrun, reported by the device): the queue
            // skips as much of its audio, so it plays on the timeline's sample as before and
            // every queue stays where the timeline puts it. (Under `playInFull` it slides, as
            // Apple's queues do.)
            q.pointee.queueTime += skipped
            q.pointee.skippedFrames.wrappingAdd(skipped, ordering: .relaxed)
        }
        if q.pointee.invalidatedByRate.load(ordering: .relaxed) != 0 {
            // Prepared for another rate: it never plays again (the user side refuses starts).
            if q.pointee.runState != .stopped { stop(q, at: t0) }
            publishClock(q, deviceTime: t0 + Int64(n))
            return
        }
        if q.pointee.armedCount > 0 || q.pointee.fireRequest.load(ordering: .relaxed) != q.pointee.fireSeen {
            fireArmed(q, t0: t0)
        }
        updateGainTarget(q)

        var f = 0
        if q.pointee.runState == .scheduled {
            let startAt = q.pointee.startAt
            if startAt >= t0 + Int64(n) { publishClock(q, deviceTime: t0 + Int64(n)); return }
            f = Int(max(0, startAt - t0))
            q.pointee.runState = .running
            q.pointee.startDeviceTime = t0 + Int64(f)
            // Queue time at the first rendered frame: the requested offset, plus — for a start
            // that must stay on the timeline (group starts) but arrived late — the frames missed.
            q.pointee.queueTime = q.pointee.startQueueTime
                + (q.pointee.alignLateStart && startAt < t0 ? t0 - startAt : 0)
            emit(RenderEvent(kind: .started, slot: q.pointee.slot, segment: nil,
                             sampleTime: t0 + Int64(f), value: 0, detail: 0))
        }

        while f < n && q.pointee.runState == .running {
            if q.pointee.current == nil { q.pointee.current = popSegment(q) }
            guard let seg = q.pointee.current else {
                if q.pointee.drainThenStop {
                    stop(q, at: t0 + Int64(f))
                    break
                }
                if q.pointee.starvedSince < 0 && !q.pointee.awaitingAfterReset {
                    q.pointee.starvedSince = q.pointee.queueTime
                    q.pointee.starvedDeviceTime = t0 + Int64(f)
                    q.pointee.discontinuityCount.wrappingAdd(1, ordering: .relaxed)
                }
                meterSilence(q, frames: n - f, at: t0 + Int64(f))
                q.pointee.queueTime += Int64(n - f)
                f = n
                break
            }
            if !seg.pointee.started && seg.pointee.start == Segment.follow {
                seg.pointee.start = q.pointee.awaitingAfterReset
                    ? max(q.pointee.lastEnd, q.pointee.queueTime) : q.pointee.lastEnd
            }
            q.pointee.awaitingAfterReset = false
            var segStart = seg.pointee.start
            if q.pointee.starvedSince >= 0 {
                // Silence ran from `starvedSince` to now; the part from when this segment was due
                // (its start, if later) to now was missing audio: that is the underrun.
                let due = max(segStart, q.pointee.starvedSince)
                let length = q.pointee.queueTime - due
                if length > 0 {
                    emit(RenderEvent(kind: .underrun, slot: q.pointee.slot, segment: nil,
                                     sampleTime: q.pointee.starvedDeviceTime + (due - q.pointee.starvedSince),
                                     value: length, detail: 0))
                }
                q.pointee.starvedSince = -1
            }
            if !seg.pointee.started && segStart < q.pointee.queueTime
                && q.pointee.playsLateInFull.load(ordering: .relaxed) {
                // Late (after an underrun, reported above): play it in full from now; the
                // queue's timeline slides by the lateness.
                segStart = q.pointee.queueTime
                seg.pointee.start = segStart
            }
            let queueTime = q.pointee.queueTime
            if queueTime < segStart {
                let k = Int(min(Int64(n - f), segStart - queueTime))
                meterSilence(q, frames: k, at: t0 + Int64(f))
                q.pointee.queueTime += Int64(k)
                f += k
                continue
            }
            let position = Int(queueTime - segStart)
            let count = seg.pointee.frameCount
            if position >= count {
                finishSegment(q, seg, t0: t0 + Int64(f))
                continue
            }
            if !seg.pointee.started {
                seg.pointee.started = true
                seg.pointee.resolvedStart = segStart
                let frames = seg.pointee.rampFrames
                if frames >= 0 {
                    q.pointee.activeRampFrames = frames
                    q.pointee.effectiveRampFrames.store(frames, ordering: .relaxed)
                }
                let pan = seg.pointee.panGains
                if pan != PanLaw.none {
                    beginPanRamp(q, to: pan)
                    q.pointee.effectivePanBits.store(seg.pointee.pan.bitPattern, ordering: .relaxed)
                }
                let v = seg.pointee.volume
                if !v.isNaN {
                    q.pointee.volume = v
                    q.pointee.effectiveVolumeBits.store(v.bitPattern, ordering: .relaxed)
                    let target = v * Float(bitPattern: q.pointee.mixerGainBits.load(ordering: .relaxed))
                    beginRamp(q, to: target)
                }
            }
            let k = min(n - f, count - position)
            let rampBefore = q.pointee.rampRemaining
            let gainBefore = q.pointee.gain
            mix(q, seg, from: position, frames: k, into: output, at: f, deviceTime: t0 + Int64(f))
            q.pointee.prefetchHint = UnsafeRawPointer(seg.pointee.samples + (position + k) * seg.pointee.channelCount)
            q.pointee.prefetchBytes = (count - position - k) * seg.pointee.channelCount * MemoryLayout<Float>.size
            q.pointee.prefetchSegment = seg
            if q.pointee.seenRoute & 2 == 0, let direct = directOutputs?[Int(q.pointee.slot)] {
                mixDirect(q, seg, from: position, frames: k, into: direct, at: f,
                          ramped: rampBefore > 0, gain: gainBefore)
            }
            q.pointee.queueTime += Int64(k)
            f += k
            if position + k == count { finishSegment(q, seg, t0: t0 + Int64(f)) }
        }
        publishClock(q, deviceTime: t0 + Int64(n))
    }

    @inline(__always)
    func popSegment(_ q: UnsafeMutablePointer<QueueRenderState>) -> UnsafeMutablePointer<Segment>? {
        if q.pointee.fifoCount == 0 { return nil }
        let index = q.pointee.fifoHead
        let seg = q.pointee.fifo[index]
        q.pointee.fifo[index] = nil
        q.pointee.fifoHead = (index + 1) & q.pointee.fifoMask
        q.pointee.fifoCount -= 1
        return seg
    }

    @inline(__always)
    func finishSegment(_ q: UnsafeMutablePointer<QueueRenderState>, _ seg: UnsafeMutablePointer<Segment>,
                       t0: Int64) {
        q.pointee.lastEnd = seg.pointee.start + Int64(seg.pointee.frameCount)
        q.pointee.current = nil
        q.pointee.prefetchSegment = nil
        emit(RenderEvent(kind: .bufferDone, slot: q.pointee.slot, segment: seg,
                         sampleTime: t0, value: 0, detail: 0))
    }

    /// Returns every pending segment through `bufferDone` events, oldest first.
    @inline(__always)
    func returnAllSegments(_ q: UnsafeMutablePointer<QueueRenderState>, sampleTime: Int64, notify: Bool) {
        q.pointee.prefetchSegment = nil
        if let seg = q.pointee.current {
            q.pointee.current = nil
            if notify { emit(RenderEvent(kind: .bufferDone, slot: q.pointee.slot, segment: seg,
                                         sampleTime: sampleTime, value: 0, detail: 0)) }
        }
        while let seg = popSegment(q) {
            if notify { emit(RenderEvent(kind: .bufferDone, slot: q.pointee.slot, segment: seg,
                                         sampleTime: sampleTime, value: 0, detail: 0)) }
        }
        while q.pointee.armedCount > 0 {
            q.pointee.armedCount -= 1
            let seg = q.pointee.armed[q.pointee.armedCount]
            q.pointee.armed[q.pointee.armedCount] = nil
            if notify, let seg { emit(RenderEvent(kind: .bufferDone, slot: q.pointee.slot, segment: seg,
                                                  sampleTime: sampleTime, value: 0, detail: 0)) }
        }
    }

    /// Cuts the queue's audio at queue time `time`: the part of the current or a pending segment
    /// from there on is dropped, segments that start there or later come back unplayed (oldest
    /// first), and segments enqueued afterwards without a start time follow from `time`. Audio
    /// already played cannot be cut: a `time` the queue has passed cuts where it is.
    @inline(__always)
    func truncate(_ q: UnsafeMutablePointer<QueueRenderState>, at time: Int64, t0: Int64) {
        let playing = q.pointee.runState == .running || q.pointee.runState == .paused
        let cut = playing ? max(time, q.pointee.queueTime) : time
        if cut > time { q.pointee.lateCutFrames.wrappingAdd(cut - time, ordering: .relaxed) }
        let followFrom = q.pointee.awaitingAfterReset ? max(q.pointee.lastEnd, q.pointee.queueTime) : q.pointee.lastEnd
        var end = followFrom
        if let seg = q.pointee.current {
            if !seg.pointee.started && seg.pointee.start == Segment.follow { seg.pointee.start = followFrom }
            let start = seg.pointee.start
            if start >= cut && !seg.pointee.started {
                q.pointee.current = nil
                q.pointee.prefetchSegment = nil
                emit(RenderEvent(kind: .bufferDone, slot: q.pointee.slot, segment: seg, sampleTime: t0, value: 0, detail: 0))
            } else {
                cutSegment(seg, start: start, at: cut)
                end = start + Int64(seg.pointee.frameCount)
                if q.pointee.prefetchSegment == seg { q.pointee.prefetchSegment = nil }
            }
        }
        var kept = 0
        while kept < q.pointee.fifoCount {
            let seg = q.pointee.fifo[(q.pointee.fifoHead + kept) & q.pointee.fifoMask]!
            let start = seg.pointee.start == Segment.follow ? end : seg.pointee.start
            if start >= cut { break }
            cutSegment(seg, start: start, at: cut)
            end = start + Int64(seg.pointee.frameCount)
            kept += 1
        }
        var index = kept
        while index < q.pointee.fifoCount {
            let slot = (q.pointee.fifoHead + index) & q.pointee.fifoMask
            if let seg = q.pointee.fifo[slot] {
                q.pointee.fifo[slot] = nil
                emit(RenderEvent(kind: .bufferDone, slot: q.pointee.slot, segment: seg, sampleTime: t0, value: 0, detail: 0))
            }
            index += 1
        }
        q.pointee.fifoCount = kept
        if q.pointee.current == nil && kept == 0 {
            // Nothing left before the cut: what follows starts at `time` (a late cut stays on
            // the timeline: the render loop skips the part already passed).
            q.pointee.lastEnd = time
            q.pointee.awaitingAfterReset = false
        }
    }

    /// Answers a fire request (in the first cycle from its not-before time): the armed segment
    /// for the queue time of this cycle's first frame replaces the audio from there (as a truncation there and an enqueue would), and the answer
    /// is published (-1 when none was armed for it, or the queue is not running). Then hands back
    /// the armed segments the queue has reached: they can no longer fire.
    @inline(__always)
    func fireArmed(_ q: UnsafeMutablePointer<QueueRenderState>, t0: Int64) {
        let now = q.pointee.queueTime
        let request = q.pointee.fireRequest.load(ordering: .acquiring)
        if request != q.pointee.fireSeen,
           q.pointee.armedCount == 0 || now >= q.pointee.fireNotBefore.load(ordering: .relaxed) {
            q.pointee.fireSeen = request
            var fired: Int64 = -1
            if q.pointee.runState == .running {
                for i in 0..<q.pointee.armedCount where q.pointee.armed[i]!.pointee.start == now {
                    let seg = q.pointee.armed[i]!
                    q.pointee.armedCount -= 1
                    q.pointee.armed[i] = q.pointee.armed[q.pointee.armedCount]
                    q.pointee.armed[q.pointee.armedCount] = nil
                    truncate(q, at: now, t0: t0)
                    let index = (q.pointee.fifoHead + q.pointee.fifoCount) & q.pointee.fifoMask
                    q.pointee.fifo[index] = seg
                    q.pointee.fifoCount += 1
                    fired = now
                    break
                }
            }
            q.pointee.fireOutcomeTime.store(fired, ordering: .relaxed)
            q.pointee.fireOutcomeGeneration.store(request, ordering: .releasing)
        }
        returnArmed(q, t0: t0, through: now)
    }

    /// Hands back the armed segments for queue times up to `time`.
    @inline(__always)
    func returnArmed(_ q: UnsafeMutablePointer<QueueRenderState>, t0: Int64, through time: Int64) {
        var i = 0
        while i < q.pointee.armedCount {
            let seg = q.pointee.armed[i]!
            if seg.pointee.start > time {
                i += 1
                continue
            }
            q.pointee.armedCount -= 1
            q.pointee.armed[i] = q.pointee.armed[q.pointee.armedCount]
            q.pointee.armed[q.pointee.armedCount] = nil
            emit(RenderEvent(kind: .bufferDone, slot: q.pointee.slot, segment: seg, sampleTime: t0, value: 0, detail: 0))
        }
    }

    /// Shortens `seg` (starting at queue time `start`) so that it ends at `cut` at the latest.
    @inline(__always)
    func cutSegment(_ seg: UnsafeMutablePointer<Segment>, start: Int64, at cut: Int64) {
        let count = Int64(seg.pointee.frameCount)
        guard start + count > cut else { return }
        let removed = Int(start + count - max(cut, start))
        seg.pointee.frameCount -= removed
        seg.pointee.truncatedFrames += removed
    }

    @inline(__always)
    func endStarvation(_ q: UnsafeMutablePointer<QueueRenderState>) {
        if q.pointee.starvedSince >= 0 {
            let length = q.pointee.queueTime - q.pointee.starvedSince
            if length > 0 {
                emit(RenderEvent(kind: .underrun, slot: q.pointee.slot, segment: nil,
                                 sampleTime: q.pointee.starvedDeviceTime, value: length, detail: 0))
            }
            q.pointee.starvedSince = -1
        }
    }

    @inline(__always)
    func stop(_ q: UnsafeMutablePointer<QueueRenderState>, at sampleTime: Int64) {
        let wasActive = q.pointee.runState == .running || q.pointee.runState == .paused
        endStarvation(q)
        returnAllSegments(q, sampleTime: sampleTime, notify: !q.pointee.disposeAfterStop)
        q.pointee.runState = .stopped
        q.pointee.queueTime = 0
        q.pointee.lastEnd = 0
        q.pointee.drainThenStop = false
        q.pointee.rampRemaining = 0
        q.pointee.gain = q.pointee.gainTarget
        q.pointee.meter.clear()
        if wasActive {
            emit(RenderEvent(kind: .stopped, slot: q.pointee.slot, segment: nil,
                             sampleTime: sampleTime, value: 0, detail: 0))
        }
        if q.pointee.disposeAfterStop { q.pointee.removed = true }
    }

    @inline(__always)
    func applyCommands(_ q: UnsafeMutablePointer<QueueRenderState>, t0: Int64) {
        while let message = q.pointee.commands.pop() {
            guard let command = QueueCommand(message) else { continue }
            switch command.kind {
            case .enqueue:
                guard let seg = command.segment else { continue }
                let index = (q.pointee.fifoHead + q.pointee.fifoCount) & q.pointee.fifoMask
                q.pointee.fifo[index] = seg
                q.pointee.fifoCount += 1
            case .start:
                switch q.pointee.runState {
                case .stopped:
                    q.pointee.runState = .scheduled
                    q.pointee.startAt = command.time < 0 ? t0 : command.time
                    q.pointee.startQueueTime = message.value
                    q.pointee.alignLateStart = message.detail & 1 != 0
                    q.pointee.queueTime = 0
                    q.pointee.lastEnd = 0
                    q.pointee.awaitingAfterReset = false
                case .paused:
                    q.pointee.runState = .running
                    emit(RenderEvent(kind: .started, slot: q.pointee.slot, segment: nil,
                                     sampleTime: t0, value: 1, detail: 0))
                case .scheduled, .running:
                    break
                }
            case .pause:
                if q.pointee.runState == .running {
                    q.pointee.runState = .paused
                    emit(RenderEvent(kind: .paused, slot: q.pointee.slot, segment: nil,
                                     sampleTime: t0, value: 0, detail: 0))
                }
            case .stopNow:
                stop(q, at: t0)
            case .stopWhenDrained:
                // On a queue that hasn't started yet this takes effect once it runs.
                q.pointee.drainThenStop = true
            case .reset:
                endStarvation(q)
                returnAllSegments(q, sampleTime: t0, notify: true)
                q.pointee.lastEnd = q.pointee.queueTime
                q.pointee.drainThenStop = false
                q.pointee.awaitingAfterReset = true
            case .truncate:
                truncate(q, at: command.time, t0: t0)
            case .arm:
                guard let seg = command.segment else { continue }
                if q.pointee.armedCount < QueueRenderState.armedCapacity {
                    q.pointee.armed[q.pointee.armedCount] = seg
                    q.pointee.armedCount += 1
                } else {
                    emit(RenderEvent(kind: .bufferDone, slot: q.pointee.slot, segment: seg, sampleTime: t0, value: 0, detail: 0))
                }
            case .disarm:
                returnArmed(q, t0: t0, through: .max)
            case .disposeNow:
                returnAllSegments(q, sampleTime: t0, notify: false)
                q.pointee.runState = .stopped
                q.pointee.removed = true
                return
            case .disposeWhenDrained:
                q.pointee.disposeAfterStop = true
                if q.pointee.runState == .stopped {
                    q.pointee.removed = true
                    return
                }
                q.pointee.drainThenStop = true
            }
        }
    }
}
