import Foundation
import Lockstep

// Parameters and properties: Volume, VolumeRampTime and Pan on the engine queue (PlayRate and
// Pitch only at their neutral values: no time-pitch processing), and reading and writing the
// queue's properties (run state, device facts, format, magic cookie, channel layout, level
// meters, time-pitch and codec settings).
extension CompatQueue {
    /// The engine parameter an Audio Queue parameter stands for; nil for PlayRate 1 and Pitch 0,
    /// which leave the audio as it is. Throws `kAudioQueueErr_InvalidParameter` for PlayRate and
    /// Pitch at other values (they need Apple's time-pitch processor) and unknown IDs.
    func engineParameter(_ id: AudioQueueParameterID, settingTo value: Float?) throws(AudioQueueError) -> QueueParameter? {
        switch id {
        case kAudioQueueParam_Volume: return .volume
        case kAudioQueueParam_VolumeRampTime: return .volumeRampTime
        case kAudioQueueParam_Pan: return .pan
        case kAudioQueueParam_PlayRate, kAudioQueueParam_Pitch:
            let neutral: Float = id == kAudioQueueParam_PlayRate ? 1 : 0
            if let value, value != neutral {
                let name = id == kAudioQueueParam_PlayRate ? "kAudioQueueParam_PlayRate" : "kAudioQueueParam_Pitch"
                throw AudioQueueError(.invalidParameter, "\(name) \(value) needs time-pitch processing (kAudioQueueProperty_EnableTimePitch), which Lockstep does not provide; only \(neutral) (unchanged audio) is accepted")
            }
            return nil
        default:
            throw AudioQueueError(.invalidParameter, "parameter \(id) is not an audio queue parameter; use kAudioQueueParam_Volume (1), kAudioQueueParam_VolumeRampTime (4) or kAudioQueueParam_Pan (13)")
        }
    }

    func parameter(_ id: AudioQueueParameterID) throws(AudioQueueError) -> Float {
        try state.withLock { (state) throws(AudioQueueError) -> Float in
            try state.checkDisposal()
            try requireOutput("AudioQueueGetParameter")
            guard let parameter = try engineParameter(id, settingTo: nil) else {
                return id == kAudioQueueParam_PlayRate ? 1 : 0
            }
            if let output = state.output { return output.parameter(parameter) }
            return state.parameters[parameter] ?? (parameter == .volume ? 1 : 0)
        }
    }

    func setParameter(_ id: AudioQueueParameterID, _ value: Float) throws(AudioQueueError) {
        try state.withLock { (state) throws(AudioQueueError) in
            try state.checkDisposal()
            try requireOutput("AudioQueueSetParameter")
            guard let parameter = try engineParameter(id, settingTo: value) else { return }
            try OutputQueue.check(parameter, value)
            if let output = state.output { try output.setParameter(parameter, to: value) }
            state.parameters[parameter] = value
        }
    }

    // MARK: - Properties

    static let listenable: Set<AudioQueuePropertyID> = [
        kAudioQueueProperty_IsRunning, kAudioQueueDeviceProperty_SampleRate, kAudioQueueDeviceProperty_NumberChannels,
        kAudioQueueProperty_CurrentDevice, kAudioQueueProperty_MagicCookie, kAudioQueueProperty_StreamDescription,
        kAudioQueueProperty_ChannelLayout, kAudioQueueProperty_EnableLevelMetering,
        kAudioQueueProperty_MaximumOutputPacketSize, kAudioQueueProperty_DecodeBufferSizeFrames,
        kAudioQueueProperty_ConverterError, kAudioQueueProperty_EnableTimePitch, kAudioQueueProperty_TimePitchAlgorithm,
        kAudioQueueProperty_TimePitchBypass, kAudioQueueProperty_HardwareCodecPolicy, kAudioQueueProperty_ChannelAssignments,
    ]
    /// The time-pitch properties, which belong to output queues.
    static let timePitch: Set<AudioQueuePropertyID> = [
        kAudioQueueProperty_EnableTimePitch, kAudioQueueProperty_TimePitchAlgorithm, kAudioQueueProperty_TimePitchBypass,
    ]
    /// The values `kAudioQueueProperty_TimePitchAlgorithm` takes.
    static let timePitchAlgorithms: Set<UInt32> = [
        kAudioQueueTimePitchAlgorithm_Spectral, kAudioQueueTimePitchAlgorithm_TimeDomain,
        kAudioQueueTimePitchAlgorithm_Varispeed, kAudioQueueTimePitchAlgorithm_LowQualityZeroLatency,
    ]
    /// The floor of `kAudioQueueProperty_CurrentLevelMeterDB`: Apple's power meter (`PowerMeter`
    /// in Apple's Core Audio utility sample code) reports −120 dB for any level at or below 10⁻⁶.
    static let meterFloorDecibels: Float = -120
    static let meterFloorLinear: Float = 1e-6

    /// A linear level in dBFS with Apple's finite floor (−120 dB) instead of −∞.
    static func meterDecibels(_ linear: Float) -> Float {
        linear <= meterFloorLinear ? meterFloorDecibels : 20 * log10f(linear)
    }
    static let meters: Set<AudioQueuePropertyID> = [kAudioQueueProperty_CurrentLevelMeter, kAudioQueueProperty_CurrentLevelMeterDB]

    /// The largest `kAudioQueueProperty_DecodeBufferSizeFrames` accepted (about 6 minutes at 48 kHz).
    static let maximumDecodeBufferFrames: UInt32 = 1 << 24

    /// Throws `kAudioQueueErr_InvalidProperty` for a property of output queues asked of an input queue.
    func requireOutputProperty(_ id: AudioQueuePropertyID) throws(AudioQueueError) {
        guard isOutput else {
            throw AudioQueueError(.invalidProperty, "property '\(fourCharCodeString(id))' belongs to output (playback) queues; this is an input queue")
        }
    }

    /// The encoder of an input queue of a compressed format, for the Audio Converter properties
    /// Apple's queues answer for the converter inside them (`kAudioConverterPrimeInfo`,
    /// `kAudioConverterPropertyMaximumOutputPacketSize`); other queues have none.
    private func requireEncoding(_ id: AudioQueuePropertyID) throws(AudioQueueError) -> InputPacketEncoding {
        guard let encoding = state.withLock({ $0.encoding }) else {
            throw AudioQueueError(.invalidProperty, "property '\(fourCharCodeString(id))' belongs to the encoder of an input queue recording a compressed format; this queue has none")
        }
        return encoding
    }

    func unknownProperty(_ id: AudioQueuePropertyID) -> AudioQueueError {
        AudioQueueError(.invalidProperty, "property '\(fourCharCodeString(id))' is not an audio queue property Lockstep knows")
    }

    /// The device the queue uses or will use: bound engine, offline format, or the default engine.
    private func deviceFacts() throws(AudioQueueError) -> (name: String, rate: Double, channels: Int) {
        let (engine, offline) = state.withLock { ($0.engine, $0.offlineLayout) }
        if let offline, engine == nil { return ("offline", offline.format.sampleRate, offline.format.channelCount) }
        let device: Engine
        if let engine { device = engine } else {
            device = try DefaultDevice.shared.engine()
        }
        return (device.device.name, device.sampleRate, isOutput ? device.channelCount : device.device.inputChannelCount)
    }

    private var defaultChannelLayout: [UInt8] { ChannelLayoutBytes.standard(channels: layout.format.channelCount) }

    func propertySize(_ id: AudioQueuePropertyID) throws(AudioQueueError) -> UInt32 {
        try state.withLock { (state) throws(AudioQueueError) in try state.checkDisposal() }
        switch id {
        case kAudioQueueProperty_IsRunning, kAudioQueueDeviceProperty_NumberChannels,
             kAudioQueueProperty_EnableLevelMetering, kAudioQueueProperty_MaximumOutputPacketSize:
            return 4
        case kAudioQueueProperty_DecodeBufferSizeFrames, kAudioQueueProperty_EnableTimePitch,
             kAudioQueueProperty_TimePitchAlgorithm, kAudioQueueProperty_TimePitchBypass:
            try requireOutputProperty(id)
            return 4
        case kAudioQueueProperty_ConverterError, kAudioQueueProperty_HardwareCodecPolicy: return 4
        case kAudioConverterPropertyMaximumOutputPacketSize:
            _ = try requireEncoding(id)
            return 4
        case kAudioConverterPrimeInfo:
            _ = try requireEncoding(id)
            return UInt32(MemoryLayout<AudioConverterPrimeInfo>.size)
        case kAudioQueueProperty_ChannelAssignments:
            return UInt32(layout.format.channelCount * MemoryLayout<AudioQueueChannelAssignment>.stride)
        case kAudioQueueDeviceProperty_SampleRate: return 8
        case kAudioQueueProperty_CurrentDevice: return UInt32(MemoryLayout<CFString?>.size)
        case kAudioQueueProperty_StreamDescription: return UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
        case kAudioQueueProperty_MagicCookie: return state.withLock { UInt32($0.magicCookie.count) }
        case kAudioQueueProperty_ChannelLayout: return state.withLock { UInt32(($0.channelLayout ?? defaultChannelLayout).count) }
        case kAudioQueueProperty_CurrentLevelMeter, kAudioQueueProperty_CurrentLevelMeterDB:
            return UInt32(layout.format.channelCount * MemoryLayout<AudioQueueLevelMeterState>.size)
        default: throw unknownProperty(id)
        }
    }

    func property(_ id: AudioQueuePropertyID, _ data: UnsafeMutableRawPointer, _ size: inout UInt32) throws(AudioQueueError) {
        let available = Int(size)
        func put<T>(_ value: T) throws(AudioQueueError) {
            guard available >= MemoryLayout<T>.size else {
                throw AudioQueueError(.invalidPropertySize, "property '\(fourCharCodeString(id))' needs \(MemoryLayout<T>.size) bytes, not \(available)")
            }
            data.storeBytes(of: value, as: T.self)
            size = UInt32(MemoryLayout<T>.size)
        }
        func putBytes(_ bytes: [UInt8]) throws(AudioQueueError) {
            guard available >= bytes.count else {
                throw AudioQueueError(.invalidPropertySize, "property '\(fourCharCodeString(id))' needs \(bytes.count) bytes, not \(available)")
            }
            bytes.withUnsafeBytes { if let base = $0.baseAddress { data.copyMemory(from: base, byteCount: bytes.count) } }
            size = UInt32(bytes.count)
        }
        try state.withLock { (state) throws(AudioQueueError) in try state.checkDisposal() }
        switch id {
        case kAudioQueueProperty_IsRunning:
            let running = state.withLock { $0.output?.isRunning ?? $0.input?.isRunning ?? false }
            try put(UInt32(running ? 1 : 0))
        case kAudioQueueDeviceProperty_SampleRate:
            try put(Float64(try deviceFacts().rate))
        case kAudioQueueDeviceProperty_NumberChannels:
            try put(UInt32(try deviceFacts().channels))
        case kAudioQueueProperty_CurrentDevice:
            guard available >= MemoryLayout<CFString?>.size else {
                throw AudioQueueError(.invalidPropertySize, "kAudioQueueProperty_CurrentDevice needs \(MemoryLayout<CFString?>.size) bytes (a CFString?), not \(available)")
            }
            let name = try deviceFacts().name
            // The caller's variable is an initialized `CFString?`: assign, so ARC stays balanced.
            data.assumingMemoryBound(to: Optional<CFString>.self).pointee = CFString(name)
            size = UInt32(MemoryLayout<CFString?>.size)
        case kAudioQueueProperty_MagicCookie:
            try putBytes(state.withLock { $0.magicCookie })
        case kAudioQueueProperty_MaximumOutputPacketSize:
            try put(UInt32(compressed?.packetSizeUpperBound ?? layout.bytesPerFrame))
        case kAudioConverterPropertyMaximumOutputPacketSize:
            try put(UInt32(try requireEncoding(id).maximumPacketSize))
        case kAudioConverterPrimeInfo:
            let encoding = try requireEncoding(id)
            let info = state.withLock { _ in
                AudioConverterPrimeInfo(leadingFrames: UInt32(encoding.primingFrames), trailingFrames: UInt32(encoding.remainderFrames))
            }
            try put(info)
        case kAudioQueueProperty_StreamDescription:
            try put(compressed?.streamDescription ?? layout.streamDescription)
        case kAudioQueueProperty_ChannelLayout:
            try putBytes(state.withLock { $0.channelLayout ?? defaultChannelLayout })
        case kAudioQueueProperty_EnableLevelMetering:
            try put(UInt32(state.withLock { $0.metering } ? 1 : 0))
        case kAudioQueueProperty_DecodeBufferSizeFrames:
            try requireOutputProperty(id)
            try put(UInt32(state.withLock { $0.decodeBufferFrames }))
        case kAudioQueueProperty_ConverterError:
            // The encoder's last failure (an input queue of a compressed format), else none.
            try put(state.withLock { UInt32(bitPattern: $0.encoding?.lastError ?? 0) })
        case kAudioQueueProperty_EnableTimePitch:
            try requireOutputProperty(id)
            try put(UInt32(0))
        case kAudioQueueProperty_TimePitchAlgorithm:
            try requireOutputProperty(id)
            try put(state.withLock { $0.timePitchAlgorithm })
        case kAudioQueueProperty_TimePitchBypass:
            try requireOutputProperty(id)
            try put(state.withLock { $0.timePitchBypass })
        case kAudioQueueProperty_HardwareCodecPolicy:
            try put(state.withLock { $0.hardwareCodecPolicy })
        case kAudioQueueProperty_ChannelAssignments:
            let channels = layout.format.channelCount
            let stride = MemoryLayout<AudioQueueChannelAssignment>.stride
            guard available >= channels * stride else {
                throw AudioQueueError(.invalidPropertySize, "channel assignments are \(stride) bytes per queue channel (\(channels * stride) for this queue), not \(available)")
            }
            let name = try deviceFacts().name
            let uid = state.withLock { state -> CFString in
                if let uid = state.assignmentUID, uid.string == name { return uid }
                let uid = CFString(name)
                state.assignmentUID = uid
                return uid
            }
            let assignments = data.bindMemory(to: AudioQueueChannelAssignment.self, capacity: channels)
            for channel in 0..<channels {
                (assignments + channel).initialize(to: AudioQueueChannelAssignment(
                    mDeviceUID: Unmanaged.passUnretained(uid), mChannelNumber: UInt32(channel + 1)))
            }
            size = UInt32(channels * stride)
        case kAudioQueueProperty_CurrentLevelMeter, kAudioQueueProperty_CurrentLevelMeterDB:
            let stride = MemoryLayout<AudioQueueLevelMeterState>.size
            guard available >= stride, available % stride == 0 else {
                throw AudioQueueError(.invalidPropertySize, "level meters are \(stride) bytes per channel (AudioQueueLevelMeterState); \(available) bytes is not a whole number of channels")
            }
            let (enabled, output, input) = state.withLock { ($0.metering, $0.output, $0.input) }
            guard enabled else {
                throw AudioQueueError(.invalidProperty, "level metering is off; set kAudioQueueProperty_EnableLevelMetering to 1 first")
            }
            var levels = Array(repeating: ChannelLevel(averagePower: 0, peakPower: 0), count: layout.format.channelCount)
            if let output { levels = try output.currentLevelMeter() }
            if let input { levels = try input.currentLevelMeter() }
            if id == kAudioQueueProperty_CurrentLevelMeterDB {
                levels = levels.map { ChannelLevel(averagePower: Self.meterDecibels($0.averagePower),
                                                   peakPower: Self.meterDecibels($0.peakPower)) }
            }
            let count = min(available / stride, levels.count)
            let states = data.bindMemory(to: AudioQueueLevelMeterState.self, capacity: count)
            for channel in 0..<count {
                states[channel] = AudioQueueLevelMeterState(mAveragePower: levels[channel].averagePower,
                                                            mPeakPower: levels[channel].peakPower)
            }
            size = UInt32(count * stride)
        default:
            throw unknownProperty(id)
        }
    }

    func setProperty(_ id: AudioQueuePropertyID, _ data: UnsafeRawPointer, _ size: UInt32) throws(AudioQueueError) {
        func expect(_ bytes: Int) throws(AudioQueueError) {
            guard Int(size) == bytes else {
                throw AudioQueueError(.invalidPropertySize, "property '\(fourCharCodeString(id))' takes \(bytes) bytes, not \(size)")
            }
        }
        try state.withLock { (state) throws(AudioQueueError) in try state.checkDisposal() }
        switch id {
        case kAudioQueueProperty_IsRunning, kAudioQueueDeviceProperty_SampleRate, kAudioQueueDeviceProperty_NumberChannels,
             kAudioQueueProperty_MaximumOutputPacketSize, kAudioQueueProperty_StreamDescription,
             kAudioQueueProperty_CurrentLevelMeter, kAudioQueueProperty_CurrentLevelMeterDB, kAudioQueueProperty_ConverterError:
            throw AudioQueueError(.invalidProperty, "property '\(fourCharCodeString(id))' is read-only")
        case kAudioQueueProperty_EnableTimePitch:
            try requireOutputProperty(id)
            try expect(4)
            guard data.loadUnaligned(as: UInt32.self) == 0 else {
                throw AudioQueueError(kAudioQueueErr_InvalidPropertyValue, "Lockstep has no time-pitch processor; kAudioQueueProperty_EnableTimePitch can only be 0 (kAudioQueueParam_PlayRate and Pitch stay at 1 and 0)")
            }
        case kAudioQueueProperty_TimePitchAlgorithm:
            try requireOutputProperty(id)
            try expect(4)
            let algorithm = data.loadUnaligned(as: UInt32.self)
            guard Self.timePitchAlgorithms.contains(algorithm) else {
                throw AudioQueueError(kAudioQueueErr_InvalidPropertyValue, "'\(fourCharCodeString(algorithm))' is not a time-pitch algorithm; use kAudioQueueTimePitchAlgorithm_Spectral, _TimeDomain, _Varispeed or _LowQualityZeroLatency")
            }
            state.withLock { $0.timePitchAlgorithm = algorithm }
        case kAudioQueueProperty_TimePitchBypass:
            try requireOutputProperty(id)
            try expect(4)
            let bypass: UInt32 = data.loadUnaligned(as: UInt32.self) != 0 ? 1 : 0
            state.withLock { $0.timePitchBypass = bypass }
        case kAudioQueueProperty_HardwareCodecPolicy:
            try expect(4)
            let policy = data.loadUnaligned(as: UInt32.self)
            guard policy <= kAudioQueueHardwareCodecPolicy_PreferHardware, policy != kAudioQueueHardwareCodecPolicy_UseHardwareOnly else {
                throw AudioQueueError(kAudioQueueErr_InvalidPropertyValue, policy == kAudioQueueHardwareCodecPolicy_UseHardwareOnly
                    ? "there are no hardware codecs on Linux; use kAudioQueueHardwareCodecPolicy_Default, _UseSoftwareOnly, _PreferSoftware or _PreferHardware"
                    : "hardware codec policy \(policy) is not one of the kAudioQueueHardwareCodecPolicy_… values (0…4)")
            }
            state.withLock { $0.hardwareCodecPolicy = policy }
        case kAudioQueueProperty_ChannelAssignments:
            let channels = layout.format.channelCount
            let stride = MemoryLayout<AudioQueueChannelAssignment>.stride
            try expect(channels * stride)
            let name = try deviceFacts().name
            let assignments = data.bindMemory(to: AudioQueueChannelAssignment.self, capacity: channels)
            for channel in 0..<channels {
                let assignment = assignments[channel]
                let uid = assignment.mDeviceUID.takeUnretainedValue().string
                guard uid == name, assignment.mChannelNumber == UInt32(channel + 1) else {
                    throw AudioQueueError(kAudioQueueErr_InvalidPropertyValue, "queue channel \(channel + 1) is assigned to channel \(assignment.mChannelNumber) of '\(uid)'; Lockstep plays queue channel n on channel n of the queue's device ('\(name)') only")
                }
            }
        case kAudioQueueProperty_EnableLevelMetering:
            try expect(4)
            let on = data.loadUnaligned(as: UInt32.self) != 0
            state.withLock { state in
                state.metering = on
                state.output?.isLevelMeteringEnabled = on
                state.input?.isLevelMeteringEnabled = on
            }
        case kAudioQueueProperty_DecodeBufferSizeFrames:
            try requireOutputProperty(id)
            try expect(4)
            let frames = data.loadUnaligned(as: UInt32.self)
            guard frames <= Self.maximumDecodeBufferFrames else {
                throw AudioQueueError(kAudioQueueErr_InvalidPropertyValue, "a decode buffer of \(frames) frames is too large; use 0…\(Self.maximumDecodeBufferFrames) frames")
            }
            let engine = state.withLock { state in
                state.decodeBufferFrames = Int(frames)
                return state.offlineLayout == nil ? state.engine : nil
            }
            // A larger decode buffer may take buffers now (offline: at the next render).
            engine?.performOnCallbackThread { [weak self] in self?.releaseDecoded() }
        case kAudioQueueProperty_MagicCookie:
            if state.withLock({ $0.encoding != nil }) {
                throw AudioQueueError(kAudioQueueErr_InvalidPropertyValue, "a recording queue's encoder makes the magic cookie; get it (kAudioQueueProperty_MagicCookie) and set it on the file, do not set it on the queue")
            }
            let bytes = Array(UnsafeRawBufferPointer(start: data, count: Int(size)))
            if let compressed { _ = try MagicCookie.extradata(bytes, codec: compressed.codec) }
            state.withLock { state in
                state.magicCookie = bytes
                state.decoder = nil     // the next enqueue decodes with the new cookie
            }
        case kAudioQueueProperty_ChannelLayout:
            let channels = try ChannelLayoutBytes.channelCount(data, size: Int(size), sizeError: kAudioQueueErr_InvalidPropertySize)
            guard channels == layout.format.channelCount else {
                throw AudioQueueError(kAudioQueueErr_InvalidPropertyValue, "the layout describes \(channels) channels but the queue's format has \(layout.format.channelCount); they must match")
            }
            let bytes = Array(UnsafeRawBufferPointer(start: data, count: Int(size)))
            state.withLock { $0.channelLayout = bytes }
        case kAudioQueueProperty_CurrentDevice:
            try expect(MemoryLayout<CFString?>.size)
            let requested = data.assumingMemoryBound(to: Optional<CFString>.self).pointee
            let current = try deviceFacts().name
            if let requested, requested.string != current {
                throw AudioQueueError(.invalidDevice, "device '\(requested.string)' is not this queue's device ('\(current)'); choose the device for new queues with AudioQueueSetDefaultDevice (Linux)")
            }
        default:
            throw unknownProperty(id)
        }
        notifyListeners(id)
    }
}
