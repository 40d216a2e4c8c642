import Lockstep
import Testing

@Suite("Typed errors")
struct ErrorTests {
    @Test("result codes keep Apple's values and names; an unknown OSStatus survives as itself")
    func codes() {
        #expect(AudioQueueError.Code.invalidBuffer.rawValue == -66687)
        #expect(AudioQueueError.Code.unsupportedFormat.rawValue == 1718449215)
        #expect(AudioQueueError.Code(rawValue: -66682) == .invalidParameter)
        #expect(AudioQueueError.Code.allCases.count == 15 && Set(AudioQueueError.Code.allCases).count == 15)
        #expect(AudioQueueError.Code.bufferInQueue.description == "kAudioQueueErr_BufferInQueue")
        // kAudio_ParamError (-50) is not a queue code, yet travels in the same error unchanged.
        let error = AudioQueueError(-50, "inFlags is reserved and must be 0")
        #expect(error.osStatus == -50 && error.code.description == "OSStatus -50")
        #expect(error.description == "inFlags is reserved and must be 0 (OSStatus -50, -50)")
        #expect(AudioQueueError(.invalidDevice, "x").description == "x (kAudioQueueErr_InvalidDevice, -66680)")
    }
}
