import FuzzSupport
import LockstepControl

/// One input: text typed to `--control` (standard input or a FIFO), each line parsed as the run
/// parses it (`ControlLine.parse`): an error that says something, or a command in range
/// (FuzzSupport.checkCommand). Lines that are not UTF-8 are read as the reader reads them (with
/// replacement characters). A trap or a hang is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func controlFuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: data == nil ? 0 : size), as: UTF8.self)
    for line in text.split(separator: "\n", omittingEmptySubsequences: false).prefix(256) {
        let line = String(line)
        _ = ControlLine.verb(of: line)
        do throws(ControlError) {
            checkCommand(try ControlLine.parse(line), address: ControlLine.verb(of: line))
        } catch {
            checkRefusal(error)
        }
    }
    return 0
}
