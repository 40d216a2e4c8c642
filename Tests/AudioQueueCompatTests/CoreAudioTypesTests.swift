import AudioQueueCompat
import Foundation
import LockstepTestSupport
import Testing

extension AQCompatTests {
    /// Core Audio's base types as Apple's SDK imports them: layouts, the overlay's buffer-list
    /// helpers, option sets, run loop modes, constants with Apple's values.
    @Suite("Core Audio types")
    struct CoreAudioTypesTests {
        @Test("AudioBuffer and AudioBufferList have Apple's layout; sizeInBytes counts the variable-length mBuffers")
        func bufferListLayout() {
            #expect(MemoryLayout<AudioBuffer>.size == 16 && MemoryLayout<AudioBuffer>.stride == 16)
            #expect(MemoryLayout<AudioBufferList>.size == 24)
            #expect(MemoryLayout<AudioBufferList>.offset(of: \.mBuffers) == 8)
            #expect(MemoryLayout<AudioBuffer>.offset(of: \.mDataByteSize) == 4 && MemoryLayout<AudioBuffer>.offset(of: \.mData) == 8)
            #expect(AudioBufferList.sizeInBytes(maximumBuffers: 1) == 24)
            #expect(AudioBufferList.sizeInBytes(maximumBuffers: 2) == 40)
            #expect(AudioBufferList.sizeInBytes(maximumBuffers: 8) == 136)
            #expect(MemoryLayout<AudioConverterPrimeInfo>.size == 8 && MemoryLayout<AudioQueueChannelAssignment>.stride == 16)
        }

        @Test("AudioBufferList.allocate and UnsafeMutableAudioBufferListPointer: zeroed, counted, indexed, iterated")
        func allocatedList() {
            let list = AudioBufferList.allocate(maximumBuffers: 3)
            defer { free(list.unsafeMutablePointer) }
            #expect(list.count == 3 && list.unsafePointer.pointee.mNumberBuffers == 3)
            #expect(list.allSatisfy { $0.mData == nil && $0.mDataByteSize == 0 && $0.mNumberChannels == 0 })
            var channels = (0..<3).map { _ in [Float](repeating: 0, count: 64) }
            for index in 0..<3 {
                channels[index].withUnsafeMutableBufferPointer { list[index] = AudioBuffer($0, numberOfChannels: 1) }
            }
            #expect(list.map(\.mDataByteSize) == [256, 256, 256])
            #expect(list.map(\.mNumberChannels) == [1, 1, 1])
            // The third buffer sits 8 + 2 × 16 bytes into the list, as in C.
            let raw = UnsafeRawPointer(list.unsafePointer)
            #expect(raw.load(fromByteOffset: 8 + 32 + 4, as: UInt32.self) == 256)
            list.count = 2
            #expect(Array(list.indices) == [0, 1])
            #expect(UnsafeMutableAudioBufferListPointer(nil) == nil)
        }

        @Test("AudioTimeStampFlags is an OptionSet, as Apple's Swift SDK imports it; the C names are its members")
        func timeStampFlags() {
            var stamp = AudioTimeStamp()
            #expect(stamp.mFlags.isEmpty)
            stamp.mFlags = [.sampleTimeValid, .hostTimeValid]
            #expect(stamp.mFlags == .sampleHostTimeValid && stamp.mFlags.rawValue == 3)
            stamp.mFlags.insert(.rateScalarValid)
            #expect(stamp.mFlags.contains(.rateScalarValid) && !stamp.mFlags.contains(.smpteTimeValid))
            #expect(kAudioTimeStampSampleTimeValid == .sampleTimeValid && kAudioTimeStampHostTimeValid.rawValue == 2)
            #expect(AudioTimeStampFlags.wordClockTimeValid.rawValue == 8 && AudioTimeStampFlags.smpteTimeValid.rawValue == 16)
            #expect(MemoryLayout<AudioTimeStamp>.size == 64 && MemoryLayout<AudioTimeStamp>.offset(of: \.mFlags) == 56)
        }

        @Test("CFRunLoopMode spells run loop modes as Apple's Swift SDK does")
        func runLoopModes() {
            #expect(CFRunLoopMode.commonModes.rawValue == kCFRunLoopCommonModes)
            #expect(CFRunLoopMode.defaultMode.rawValue == kCFRunLoopDefaultMode)
            #expect(CFRunLoopMode(rawValue: "custom").rawValue.string == "custom")
            #expect(CFRunLoopRunInMode(.defaultMode, 0, false) == 3)
        }

        @Test("format flags and the new audio queue and audio file constants have Apple's values")
        func constants() {
            #expect(kLinearPCMFormatFlagsSampleFractionShift == 7 && kLinearPCMFormatFlagsSampleFractionMask == 0x1F80)
            #expect(kAudioFormatFlagIsNonMixable == 64 && kLinearPCMFormatFlagIsNonMixable == 64)
            #expect(kAudioFormatFlagsAreAllClear == 0x8000_0000 && kLinearPCMFormatFlagsAreAllClear == 0x8000_0000)
            #expect([kAppleLosslessFormatFlag_16BitSourceData, kAppleLosslessFormatFlag_20BitSourceData,
                     kAppleLosslessFormatFlag_24BitSourceData, kAppleLosslessFormatFlag_32BitSourceData] == [1, 2, 3, 4])
            #expect(kAudioQueueProperty_EnableTimePitch == 1902081136 && kAudioQueueProperty_TimePitchAlgorithm == 1903456353)
            #expect(kAudioQueueProperty_TimePitchBypass == 1903456354 && kAudioQueueProperty_ConverterError == 1902343781)
            #expect(kAudioQueueProperty_HardwareCodecPolicy == 1634820976 && kAudioQueueProperty_ChannelAssignments == 1634820961)
            #expect(kAudioQueueTimePitchAlgorithm_Spectral == 1936745827 && kAudioQueueTimePitchAlgorithm_TimeDomain == 1953064047)
            #expect(kAudioQueueTimePitchAlgorithm_Varispeed == 1987276900 && kAudioQueueTimePitchAlgorithm_LowQualityZeroLatency == 1819376236)
            #expect([kAudioQueueHardwareCodecPolicy_Default, kAudioQueueHardwareCodecPolicy_UseSoftwareOnly, kAudioQueueHardwareCodecPolicy_UseHardwareOnly,
                     kAudioQueueHardwareCodecPolicy_PreferSoftware, kAudioQueueHardwareCodecPolicy_PreferHardware] == [0, 1, 2, 3, 4])
            #expect([kAudioQueueParam_Volume, kAudioQueueParam_PlayRate, kAudioQueueParam_Pitch, kAudioQueueParam_VolumeRampTime,
                     kAudioQueueParam_Pan] == [1, 2, 3, 4, 13])
            #expect(kAudioFilePropertyChannelLayout == 1668112752)
        }
    }
}
