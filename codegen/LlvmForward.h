// LlvmForward: the LLVM names a codegen header may mention without including LLVM (only
// codegen's .cpp files include LLVM's headers), and IrBuilder, the IRBuilder<> they take.
#pragma once

namespace llvm {
class Value;
class ConstantFolder;
class IRBuilderDefaultInserter;
template <typename FolderTy, typename InserterTy>
class IRBuilder;
}  // namespace llvm

namespace fixbits::codegen {
using IrBuilder = llvm::IRBuilder<llvm::ConstantFolder, llvm::IRBuilderDefaultInserter>;
}  // namespace fixbits::codegen
