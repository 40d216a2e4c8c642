import CJack
import CSoxr
import Lockstep
import Synchronization

/// The steering stage: the engine renders its master outputs at a rate of its own — the ratio of
/// engine samples to device frames, set by ``JACKDevice/steer(ratio:)`` — and libsoxr's
/// variable-rate resampler turns them into the device's frames. Memory and the resampler are made
/// (and primed) when steering is enabled, off the process thread; the process thread only renders,
/// resamples into its FIFO and copies out (libsoxr allocates nothing once warm).
///
/// The stage's delay is measured, not assumed: libsoxr's variable-rate engine holds a varying
/// amount of input (its effective ratio is not exactly the one set), so one more channel, the
/// *pilot*, carries each engine sample's position (modulo ``pilotPeriod``) through the resampler,
/// and what comes out on a cycle's first frame says which engine sample plays there.
struct JACKSteering: ~Copyable {
    /// The most engine samples rendered in one cycle, and the FIFO's capacity.
    static let capacity = 2 * 8192 + 256
    /// Resampled frames kept beyond each cycle's, to absorb the resampler's ±1 frame per cycle.
    static let cushion = 16
    /// The farthest the ratio may move from 1.
    static let maximumDeviation = 0.005
    /// The pilot's ramp repeats every this many engine samples; a reading within ``pilotGuard``
    /// of the ramp's wrap (which the filter smears) is not taken.
    static let pilotPeriod = 8192
    static let pilotGuard = 512.0

    let soxr: soxr_t
    let channelCount: Int
    /// Per channel, the pilot last: what the engine rendered this cycle, and the resampled frames
    /// not yet played.
    let rendered: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let fifo: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let inputPointers: UnsafeMutablePointer<UnsafePointer<Float>?>
    let outputPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    /// Frames in the FIFO (process thread).
    var filled = Self.cushion
    /// Engine samples rendered minus device frames played since steering began (process thread):
    /// the engine's time is the device's plus this.
    var offset: Int64 = 0
    /// Cycles since the stage began (process thread): the pilot is read once it came through.
    var cycles = 0
    /// The ratio asked for (a Double's bits), the one applied (process thread), and frames of
    /// silence played because the FIFO ran short.
    let requested = Atomic<UInt64>(1.0.bitPattern)
    var applied = 1.0
    let shortFrames = Atomic<Int>(0)
    /// Engine samples from the first sample rendered in the latest cycle to the one that played
    /// on its first frame (a Double's bits): the stage's delay, as the pilot last read it.
    let delay = Atomic<UInt64>(0)

    /// Makes and primes the stage for `channelCount` outputs; nil when libsoxr refuses.
    init?(channelCount: Int) {
        let lanes = channelCount + 1
        guard let soxr = Self.makeResampler(channels: lanes) else { return nil }
        self.soxr = soxr
        self.channelCount = channelCount
        rendered = .allocate(capacity: lanes)
        fifo = .allocate(capacity: lanes)
        for c in 0..<lanes {
            (rendered + c).initialize(to: .allocate(capacity: Self.capacity))
            rendered[c].initialize(repeating: 0, count: Self.capacity)
            (fifo + c).initialize(to: .allocate(capacity: 2 * Self.capacity))
            fifo[c].initialize(repeating: 0, count: 2 * Self.capacity)
        }
        inputPointers = .allocate(capacity: lanes)
        inputPointers.initialize(repeating: nil, count: lanes)
        outputPointers = .allocate(capacity: lanes)
        outputPointers.initialize(repeating: nil, count: lanes)
        // Prime: the resampler holds its filter's length of input before its first output, so
        // silence goes through it until it holds silence, warming its buffers with the largest
        // blocks a cycle gives, here rather than on the process thread.
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: 2 * Self.capacity)
        defer { scratch.deallocate() }
        for _ in 0..<4 {
            for c in 0..<lanes { inputPointers[c] = UnsafePointer(rendered[c]); outputPointers[c] = scratch }
            var done = 0, made = 0
            soxr_process(soxr, inputPointers, Self.capacity, &done, outputPointers, 2 * Self.capacity, &made)
        }
        delay.store(Double(Self.cushion).bitPattern, ordering: .relaxed)
    }

    func deallocate() {
        soxr_delete(soxr)
        for c in 0...channelCount {
            rendered[c].deallocate()
            fifo[c].deallocate()
        }
        rendered.deallocate()
        fifo.deallocate()
        inputPointers.deallocate()
        outputPointers.deallocate()
    }

    static func makeResampler(channels: Int) -> soxr_t? {
        var error: soxr_error_t?
        var io = soxr_io_spec(SOXR_FLOAT32_S, SOXR_FLOAT32_S)
        var quality = soxr_quality_spec(UInt(SOXR_HQ), UInt(SOXR_VR))
        var runtime = soxr_runtime_spec(1)
        let soxr = soxr_create(1 + 2 * maximumDeviation, 1, UInt32(channels), &error, &io, &quality, &runtime)
        guard error == nil, let soxr else { return nil }
        soxr_set_io_ratio(soxr, 1, 0)
        return soxr
    }

    /// The pilot's value for engine sample `position`: a ramp centred on 0, repeating.
    @inline(__always)
    static func pilot(_ position: Int64) -> Float {
        Float(Int(position & Int64(pilotPeriod - 1)) - pilotPeriod / 2)
    }
}

/// Renders one cycle through the steering stage: the engine renders as many samples as the
/// ratio asks (from `sampleTime`, the engine's time), the resampler makes device frames of them,
/// and `frames` of those go to the master outputs. Returns the engine samples rendered.
/// Realtime-safe.
@inline(__always)
func renderSteered(_ state: UnsafeMutablePointer<JACKRealtimeState>, _ steering: UnsafeMutablePointer<JACKSteering>,
                   renderer: DeviceRenderer, frames: Int, sampleTime: Int64) -> Int {
    let channels = state.pointee.channelCount
    let ratio = Double(bitPattern: steering.pointee.requested.load(ordering: .relaxed))
    if ratio != steering.pointee.applied {
        steering.pointee.applied = ratio
        soxr_set_io_ratio(steering.pointee.soxr, ratio, frames)
    }
    let filled = steering.pointee.filled
    // The pilot on this cycle's first frame: which engine sample plays there.
    steering.pointee.cycles += 1
    if steering.pointee.cycles > 8 && filled > 0 {
        let reading = Double(steering.pointee.fifo[channels][0])
        let half = Double(JACKSteering.pilotPeriod / 2)
        if abs(reading) < half - JACKSteering.pilotGuard {
            let period = Double(JACKSteering.pilotPeriod)
            let here = Double(JACKSteering.pilot(sampleTime))
            var behind = (here - reading).truncatingRemainder(dividingBy: period)
            if behind < 0 { behind += period }
            steering.pointee.delay.store(behind.bitPattern, ordering: .relaxed)
        }
    }
    let wanted = (Double(frames + JACKSteering.cushion - filled) * ratio).rounded()
    let count = min(JACKSteering.capacity, max(0, Int(wanted)))
    // Render `count` engine samples into the stage, in chunks no longer than the engine's maximum.
    let maximum = state.pointee.maximumFrames
    var done = 0
    while done < count {
        let remaining = count - done
        let n = remaining > maximum ? min(maximum, (remaining + 1) / 2) : remaining
        for c in 0..<channels { state.pointee.channelPointers[c] = steering.pointee.rendered[c] + done }
        renderer.render(frames: n, sampleTime: sampleTime + Int64(done), input: nil, output: state.pointee.channelPointers)
        done += n
    }
    let pilot = steering.pointee.rendered[channels]
    for i in 0..<count { pilot[i] = JACKSteering.pilot(sampleTime + Int64(i)) }
    for c in 0...channels {
        steering.pointee.inputPointers[c] = UnsafePointer(steering.pointee.rendered[c])
        steering.pointee.outputPointers[c] = steering.pointee.fifo[c] + filled
    }
    var consumed = 0, made = 0
    soxr_process(steering.pointee.soxr, steering.pointee.inputPointers, count, &consumed,
                 steering.pointee.outputPointers, 2 * JACKSteering.capacity - filled, &made)
    let available = filled + made
    // The device's frames: the FIFO's first `frames`.
    for c in 0...channels {
        let taken = min(frames, available)
        if c < channels {
            guard let port = state.pointee.ports[c], let raw = jack_port_get_buffer(port, jack_nframes_t(frames)) else { continue }
            let out = raw.assumingMemoryBound(to: Float.self)
            out.update(from: steering.pointee.fifo[c], count: taken)
            if taken < frames { (out + taken).update(repeating: 0, count: frames - taken) }
            state.pointee.channelPointers[c] = out
        }
        if available > taken {
            // (Overlapping: a memmove.)
            UnsafeMutableRawPointer(steering.pointee.fifo[c])
                .copyMemory(from: steering.pointee.fifo[c] + taken, byteCount: (available - taken) * MemoryLayout<Float>.size)
        }
    }
    if available < frames {
        // (Never once primed, as the ratio stays near 1; said if it does.)
        steering.pointee.shortFrames.wrappingAdd(frames - available, ordering: .relaxed)
        renderer.reportDiscontinuity(.underrun, sampleTime: sampleTime, length: Int64(frames - available), detail: 0)
    }
    steering.pointee.filled = max(0, available - frames)
    steering.pointee.offset += Int64(count) - Int64(frames)
    return count
}
