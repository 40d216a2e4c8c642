import Synchronization

/// A mark in an input queue's capture stream, at ring frame `index`: first `silence` frames of
/// silence (frames lost to an overflow), then the frames that follow play from device time
/// `sampleTime`. A negative `silence` marks the end of a capture run (the queue stopped).
struct CaptureMark {
    var index: Int
    var silence: Int
    var sampleTime: Int64
}

/// The render-thread state of one input queue: a ring of captured frames (interleaved float in
/// the queue's channel count) the render thread fills and the callback thread drains, and a ring
/// of marks (starts, overflows, stops) placed in that stream.
struct InputRenderState: ~Copyable {
    let slot: Int32
    let channelCount: Int
    /// Whether the queue records the engine's mix (its output) instead of the device's input.
    let capturesOutput: Bool
    /// Device input channel feeding each queue channel.
    let channelMap: UnsafeMutablePointer<Int>
    let commands: SPSCRing

    // The capture ring: frame i lives at (i % capacityFrames).
    let ring: UnsafeMutablePointer<Float>
    let capacityFrames: Int
    let writeIndex = Atomic<Int>(0)
    let readIndex = Atomic<Int>(0)

    // Marks (single producer: render thread).
    let marks: UnsafeMutablePointer<CaptureMark>
    let marksCapacity: Int
    let marksWritten = Atomic<Int>(0)
    let marksRead = Atomic<Int>(0)

    var runState: RenderRunState = .stopped
    var startAt: Int64 = 0
    var stopAt: Int64 = .max
    var queueTime: Int64 = 0
    var removed = false
    /// An overflow in progress: frames lost since `lostSince` (device time), at ring index `lostAt`.
    var lost = 0
    var lostSince: Int64 = 0
    var needsTimeMark = true
    /// The device time the next captured frame should have while running, or -1: a later frame
    /// means the device skipped frames (an xrun), which are recorded as silence or left out.
    var nextExpected: Int64 = -1

    let meteringEnabled = Atomic<Bool>(false)
    var meter: LevelAccumulator
    let capturedFrames = Atomic<Int64>(0)
    let lostFrames = Atomic<Int64>(0)
    let skippedFrames = Atomic<Int64>(0)
    /// Whether frames the device skipped are recorded as silence (a hardware capture, whose audio
    /// was lost) or left out (sources that are other clients: their stream goes on after the skip).
    let fillsSkippedFrames = Atomic<Bool>(true)
    /// Device frames skipped and left out (`fillsSkippedFrames` false).
    let leftOutFrames = Atomic<Int64>(0)
    let publishedRunState = Atomic<UInt8>(0)
    /// Capture latency to compensate, in frames, as set for the next start; latched into
    /// `latency` when a start arrives, so a run keeps one timeline.
    let requestedLatency = Atomic<Int64>(0)
    /// The latency of this run: a frame captured at device time t was heard at t − latency, and
    /// the queue records it as frame t − latency.
    var latency: Int64 = 0
    /// Set by the render thread when the device's rate changed under a run (the new rate, or 0).
    let invalidatedByRate = Atomic<Int64>(0)

    init(slot: Int32, channelCount: Int, channelMap: [Int], ringFrames: Int, meterWindow: Int, capturesOutput: Bool) {
        self.slot = slot
        self.channelCount = channelCount
        self.capturesOutput = capturesOutput
        self.channelMap = .allocate(capacity: channelCount)
        for c in 0..<channelCount { self.channelMap[c] = channelMap[c] }
        commands = SPSCRing(minimumCapacity: 256)
        capacityFrames = max(ringFrames, 64)
        ring = .allocate(capacity: capacityFrames * channelCount)
        ring.initialize(repeating: 0, count: capacityFrames * channelCount)
        marksCapacity = 1024
        marks = .allocate(capacity: marksCapacity)
        marks.initialize(repeating: CaptureMark(index: 0, silence: 0, sampleTime: 0), count: marksCapacity)
        meter = LevelAccumulator(channelCount: channelCount, window: meterWindow)
    }

    func deallocateStorage() {
        channelMap.deallocate()
        commands.deallocate()
        ring.deallocate()
        marks.deallocate()
        meter.deallocate()
    }

    /// Adds a mark; false when the mark ring is full (the render thread retries next cycle).
    @inline(__always)
    func pushMark(_ mark: CaptureMark) -> Bool {
        let written = marksWritten.load(ordering: .relaxed)
        if written - marksRead.load(ordering: .acquiring) >= marksCapacity { return false }
        marks[written % marksCapacity] = mark
        marksWritten.store(written + 1, ordering: .releasing)
        return true
    }
}

extension RenderCore {
    /// Captures this cycle's device input (or, with `mix`, the mix) into every running input
    /// queue's ring; returns whether there was an input queue of that kind. Realtime-safe.
    @inline(__always)
    func captureInputs(_ input: UnsafePointer<UnsafeMutablePointer<Float>>?, frames n: Int, t0: Int64,
                       mix: Bool) -> Bool {
        var any = false
        for s in 0..<min(shared.pointee.usedInputSlots, maximumInputQueues) {
            guard let q = inputSlots[s], q.pointee.capturesOutput == mix else { continue }
            any = true
            captureInput(q, input: input, frames: n, t0: t0)
            if q.pointee.removed {
                inputSlots[s] = nil
                emit(RenderEvent(kind: .inputRemoved, slot: q.pointee.slot, segment: nil,
                                 sampleTime: t0, value: 0, detail: 0))
            }
        }
        return any
    }

    @inline(__always)
    func captureInput(_ q: UnsafeMutablePointer<InputRenderState>, input: UnsafePointer<UnsafeMutablePointer<Float>>?,
                      frames n: Int, t0 deviceTime: Int64) {
        // Work on the timeline of when the captured frames were heard (device time − latency).
        var t0 = deviceTime - q.pointee.latency
        while let message = q.pointee.commands.pop() {
            guard let command = QueueCommand(message) else { continue }
            switch command.kind {
            case .start:
                if q.pointee.runState == .stopped {
                    // A start sent for another device rate (before a rate change was seen) must
                    // not record at the new rate.
                    let rate = shared.pointee.deviceRate.load(ordering: .relaxed)
                    if message.value != 0 && message.value != rate {
                        q.pointee.invalidatedByRate.store(rate, ordering: .releasing)
                        continue
                    }
                    q.pointee.invalidatedByRate.store(0, ordering: .relaxed)
                    q.pointee.latency = max(0, q.pointee.requestedLatency.load(ordering: .acquiring))
                    t0 = deviceTime - q.pointee.latency
                    q.pointee.runState = .scheduled
                    q.pointee.startAt = command.time < 0 ? t0 : max(command.time, t0)
                    q.pointee.stopAt = .max
                    q.pointee.queueTime = 0
                    q.pointee.needsTimeMark = true
                } else if q.pointee.runState == .paused {
                    q.pointee.runState = .running
                    q.pointee.needsTimeMark = true
                    emit(RenderEvent(kind: .inputStarted, slot: q.pointee.slot, segment: nil, sampleTime: t0, value: 1, detail: 0))
                }
            case .pause:
                if q.pointee.runState == .running {
                    q.pointee.runState = .paused
                    emit(RenderEvent(kind: .inputPaused, slot: q.pointee.slot, segment: nil, sampleTime: t0, value: 0, detail: 0))
                }
            case .stopNow:
                // `time` ≥ 0: stop before that device frame; else at once.
                if command.time >= 0 {
                    if q.pointee.runState != .stopped { q.pointee.stopAt = command.time }
                } else if q.pointee.runState == .scheduled {
                    q.pointee.runState = .stopped
                } else if q.pointee.runState != .stopped {
                    q.pointee.stopAt = t0
                }
            case .disposeNow:
                q.pointee.removed = true
                return
            default:
                break
            }
        }

        let end = t0 + Int64(n)
        if q.pointee.runState == .scheduled {
            if q.pointee.startAt >= end { return }
            q.pointee.runState = .running
            emit(RenderEvent(kind: .inputStarted, slot: q.pointee.slot, segment: nil,
                             sampleTime: q.pointee.startAt, value: 0, detail: 0))
        }
        guard q.pointee.runState == .running || q.pointee.runState == .paused else { q.pointee.nextExpected = -1; return }
        let first = q.pointee.runState == .running ? max(t0, q.pointee.startAt) : end
        let last = min(end, q.pointee.stopAt)
        if q.pointee.runState != .running || q.pointee.needsTimeMark {
            q.pointee.nextExpected = -1
        } else if q.pointee.nextExpected >= 0 && first > q.pointee.nextExpected && first < last {
            if q.pointee.fillsSkippedFrames.load(ordering: .relaxed) {
                fillSkippedFrames(q, from: q.pointee.nextExpected, to: first)
            } else {
                leaveOutSkippedFrames(q, from: q.pointee.nextExpected, to: first)
            }
        }
        if first < last, let input {
            let from = Int(first - t0)
            let count = Int(last - first)
            writeFrames(q, input: input, from: from, count: count, sampleTime: first)
        } else if first < last {
            writeSilence(q, count: Int(last - first), sampleTime: first)
        }
        if first < last { q.pointee.nextExpected = last }
        if q.pointee.stopAt <= end {
            finishCapture(q, at: max(q.pointee.stopAt, t0))
        }
    }

    /// The device skipped frames `from..<to` (its clock jumped, an xrun): put exactly that much
    /// silence in the stream so the recording's timeline stays true.
    @inline(__always)
    func fillSkippedFrames(_ q: UnsafeMutablePointer<InputRenderState>, from: Int64, to: Int64) {
        let write = q.pointee.writeIndex.load(ordering: .relaxed)
        if q.pointee.lost > 0 {
            // An overflow in progress ends here; its mark comes first.
            let lost = q.pointee.lost
            guard q.pointee.pushMark(CaptureMark(index: write, silence: lost, sampleTime: q.pointee.lostSince + Int64(lost))) else {
                loseFrames(q, count: Int(to - from), sampleTime: from, at: write)
                return
            }
            emit(RenderEvent(kind: .inputOverflow, slot: q.pointee.slot, segment: nil,
                             sampleTime: q.pointee.lostSince, value: Int64(lost), detail: 0))
            q.pointee.lost = 0
        }
        let gap = Int(to - from)
        if q.pointee.pushMark(CaptureMark(index: write, silence: gap, sampleTime: to)) {
            q.pointee.skippedFrames.wrappingAdd(Int64(gap), ordering: .relaxed)
            q.pointee.needsTimeMark = false
        } else {
            loseFrames(q, count: gap, sampleTime: from, at: write)
        }
    }

    /// The device skipped frames `from..<to` but the sources did not lose them (they are other
    /// clients, skipped with it): the stream goes on with what arrives next, its frames now
    /// stamped from `to` (a mark without silence), and the jump is counted.
    @inline(__always)
    func leaveOutSkippedFrames(_ q: UnsafeMutablePointer<InputRenderState>, from: Int64, to: Int64) {
        let write = q.pointee.writeIndex.load(ordering: .relaxed)
        if q.pointee.lost > 0 {
            // An overflow in progress: its frames are lost either way; fill as before.
            fillSkippedFrames(q, from: from, to: to)
            return
        }
        if q.pointee.pushMark(CaptureMark(index: write, silence: 0, sampleTime: to)) {
            q.pointee.leftOutFrames.wrappingAdd(to - from, ordering: .relaxed)
            q.pointee.needsTimeMark = false
        } else {
            loseFrames(q, count: Int(to - from), sampleTime: from, at: write)
        }
    }

    /// Copies `count` frames starting at `from` in this cycle into the ring, counting what does
    /// not fit as lost.
    @inline(__always)
    func writeFrames(_ q: UnsafeMutablePointer<InputRenderState>, input: UnsafePointer<UnsafeMutablePointer<Float>>,
                     from: Int, count: Int, sampleTime: Int64) {
        let channels = q.pointee.channelCount
        let sourceChannels = q.pointee.capturesOutput ? channelCount : inputChannelCount
        let capacity = q.pointee.capacityFrames
        let write = q.pointee.writeIndex.load(ordering: .relaxed)
        let free = capacity - (write - q.pointee.readIndex.load(ordering: .acquiring))
        let fit = min(count, free)
        if fit > 0 {
            if !markPending(q, at: write, sampleTime: sampleTime) {
                loseFrames(q, count: count, sampleTime: sampleTime, at: write)
                return
            }
            for i in 0..<fit {
                let frame = ((write + i) % capacity) * channels
                for c in 0..<channels {
                    let source = q.pointee.channelMap[c]
                    q.pointee.ring[frame + c] = source < sourceChannels ? input[source][from + i] : 0
                }
            }
            if q.pointee.meteringEnabled.load(ordering: .relaxed) {
                for c in 0..<channels {
                    let source = q.pointee.channelMap[c]
                    if source < sourceChannels {
                        q.pointee.meter.accumulatePlanar(channel: c, UnsafePointer(input[source] + from), frames: fit)
                    }
                }
                q.pointee.meter.finishPlanar(frames: fit, at: sampleTime)
            }
            q.pointee.writeIndex.store(write + fit, ordering: .releasing)
            q.pointee.capturedFrames.wrappingAdd(Int64(fit), ordering: .relaxed)
        }
        if fit < count {
            loseFrames(q, count: count - fit, sampleTime: sampleTime + Int64(fit), at: write + fit)
        }
        q.pointee.queueTime += Int64(count)
    }

    @inline(__always)
    func writeSilence(_ q: UnsafeMutablePointer<InputRenderState>, count: Int, sampleTime: Int64) {
        // A device without inputs: the queue records silence (as lost frames would read).
        let channels = q.pointee.channelCount
        let capacity = q.pointee.capacityFrames
        let write = q.pointee.writeIndex.load(ordering: .relaxed)
        let free = capacity - (write - q.pointee.readIndex.load(ordering: .acquiring))
        let fit = min(count, free)
        if fit > 0 && markPending(q, at: write, sampleTime: sampleTime) {
            for i in 0..<fit {
                let frame = ((write + i) % capacity) * channels
                for c in 0..<channels { q.pointee.ring[frame + c] = 0 }
            }
            q.pointee.writeIndex.store(write + fit, ordering: .releasing)
            q.pointee.capturedFrames.wrappingAdd(Int64(fit), ordering: .relaxed)
        }
        if fit < count { loseFrames(q, count: count - fit, sampleTime: sampleTime + Int64(fit), at: write + fit) }
        q.pointee.queueTime += Int64(count)
    }

    /// Places the pending time mark or overflow before new frames at ring index `index`;
    /// false if the mark ring is full (the frames are then lost too, and counted).
    @inline(__always)
    func markPending(_ q: UnsafeMutablePointer<InputRenderState>, at index: Int, sampleTime: Int64) -> Bool {
        if q.pointee.lost > 0 {
            let lost = q.pointee.lost
            guard q.pointee.pushMark(CaptureMark(index: index, silence: lost, sampleTime: q.pointee.lostSince + Int64(lost))) else {
                return false
            }
            emit(RenderEvent(kind: .inputOverflow, slot: q.pointee.slot, segment: nil,
                             sampleTime: q.pointee.lostSince, value: Int64(lost), detail: 0))
            q.pointee.lost = 0
            q.pointee.needsTimeMark = q.pointee.lostSince + Int64(lost) != sampleTime
        }
        if q.pointee.needsTimeMark {
            guard q.pointee.pushMark(CaptureMark(index: index, silence: 0, sampleTime: sampleTime)) else { return false }
            q.pointee.needsTimeMark = false
        }
        return true
    }

    @inline(__always)
    func loseFrames(_ q: UnsafeMutablePointer<InputRenderState>, count: Int, sampleTime: Int64, at index: Int) {
        if q.pointee.lost == 0 { q.pointee.lostSince = sampleTime }
        q.pointee.lost += count
        q.pointee.lostFrames.wrappingAdd(Int64(count), ordering: .relaxed)
    }

    @inline(__always)
    func finishCapture(_ q: UnsafeMutablePointer<InputRenderState>, at sampleTime: Int64) {
        let write = q.pointee.writeIndex.load(ordering: .relaxed)
        if q.pointee.lost > 0 {
            // Report the overflow and close the stream with it.
            let lost = q.pointee.lost
            if q.pointee.pushMark(CaptureMark(index: write, silence: lost, sampleTime: q.pointee.lostSince + Int64(lost))) {
                emit(RenderEvent(kind: .inputOverflow, slot: q.pointee.slot, segment: nil,
                                 sampleTime: q.pointee.lostSince, value: Int64(lost), detail: 0))
                q.pointee.lost = 0
            } else {
                return  // retry next cycle
            }
        }
        guard q.pointee.pushMark(CaptureMark(index: write, silence: -1, sampleTime: sampleTime)) else { return }
        q.pointee.runState = .stopped
        q.pointee.stopAt = .max
        q.pointee.needsTimeMark = true
        emit(RenderEvent(kind: .inputStopped, slot: q.pointee.slot, segment: nil, sampleTime: sampleTime, value: 0, detail: 0))
    }
}
