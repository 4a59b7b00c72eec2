# scripts/gdb/ember_printers.py — gdb pretty-printers for ember's tensors (docs/debugging.md).
#
# Load it in gdb with   source scripts/gdb/ember_printers.py   (or add that line to a
# .gdbinit). Then `print x` on an ember::Tensor shows what Python's print(x) would show in
# the tutorial, plus the layout that is ember's whole point (core/tensor.h):
#   ember::Tensor([[1, 2, 3], [4, 5, 6]]) {sizes=[2, 3], strides=[3, 1], offset=0,
#       dtype=int64, device=cpu, requires_grad=false}
# and `print sizes` on an ember::Shape (a DimVector) shows its values:
#   ember::DimVector of length 2 = {2, 3}
# Elements are read from the storage with the view formula
#   element (i0, ..., ik) = data[storage_offset + sum(i_d * stride_d)]
# so transposed, sliced and expanded views print in logical order. Tensors on a GPU show
# their layout only (device memory is not readable from the host process). At most
# `ember-limit` elements are read (default 64; `ember-limit 0` for all).
#
# It also adds three commands:
#   ember-tensor EXPR   one tensor with every element;
#   ember-grad EXPR     a tensor's .grad, read from its AutogradMeta (core/autograd_meta.h)
#                       rather than by calling Tensor::grad(): gdb cannot call functions in
#                       the program on every machine (docs/debugging.md);
#   ember-graph EXPR    the tape behind a tensor, read from memory (no function is called
#                       in the program): each node's name, the shapes of the tensors it
#                       saved for backward, and, indented, the nodes its gradients flow to
#                       — the same walk as tutorial_03_graph.cpp, and what
#                       autograd::dump() prints when it is linked in.
#
# It reads libstdc++'s member names (std::shared_ptr::_M_ptr), ember::DimVector's (data_, size_), the
# layout of g++ 12's standard library; a Debug build (-g) is needed for ember's own types.
import gdb

DTYPES = {  # ember::DType, in declaration order (core/dtype.h)
    0: ("bool", "bool"),
    1: ("uint8", "unsigned char"),
    2: ("int32", "int"),
    3: ("int64", "long"),
    4: ("float32", "float"),
    5: ("float64", "double"),
}
DEFAULT_LIMIT = 64
_limit = [DEFAULT_LIMIT]


def _shared_ptr_target(shared_ptr):
    """The raw pointer held by a std::shared_ptr (null -> None)."""
    pointer = shared_ptr["_M_ptr"]
    return None if int(pointer) == 0 else pointer


def _vector(vector):
    """An ember::DimVector (core/dim_vector.h: a tensor's sizes or strides) as a Python list."""
    start = vector["data_"]
    return [int((start + i).dereference()) for i in range(int(vector["size_"]))]


def _std_string(value):
    return value["_M_dataplus"]["_M_p"].string(length=int(value["_M_string_length"]))


def _device(device):
    kind = int(device["type_"])
    index = int(device["index_"])
    name = "cpu" if kind == 0 else "cuda"
    return name if index < 0 else "%s:%d" % (name, index)


def _grad_fn_name(grad_fn_pointer):
    """The node's name() ("AddmmBackward0"), read from autograd::Node::name_."""
    # Every graph node is an autograd::Node, whose first base is GradFn (autograd/node.h),
    # so the plain pointer cast is exact; it needs no run-time type information.
    try:
        node_type = gdb.lookup_type("ember::autograd::Node").pointer()
        return _std_string(grad_fn_pointer.cast(node_type).dereference()["name_"])
    except gdb.error:
        return "?"


def _format_element(value, dtype_name):
    if dtype_name == "bool":
        return "True" if int(value) else "False"
    if dtype_name.startswith("float"):
        return "%.4f" % float(value)
    return str(int(value))


def _elements(impl, dtype_name, element_type, sizes, strides, offset, limit):
    """Nested lists of formatted elements in logical (row-major) order; '...' past limit."""
    data = impl["storage"]["_M_ptr"].dereference()["data_"].cast(gdb.lookup_type(element_type).pointer())
    count = [0]

    def build(dim, position):
        if dim == len(sizes):
            count[0] += 1
            return _format_element((data + position).dereference(), dtype_name)
        items = []
        for i in range(sizes[dim]):
            if limit and count[0] >= limit:
                items.append("...")
                break
            items.append(build(dim + 1, position + i * strides[dim]))
        return "[" + ", ".join(items) + "]"

    return build(0, offset)


def format_tensor(tensor, limit):
    impl_pointer = _shared_ptr_target(tensor["impl_"])
    if impl_pointer is None:
        return "ember::Tensor(undefined)"
    impl = impl_pointer.dereference()
    sizes = _vector(impl["sizes"])
    strides = _vector(impl["strides"])
    offset = int(impl["storage_offset"])
    dtype_name, element_type = DTYPES.get(int(impl["dtype"]), ("dtype?", None))
    storage = _shared_ptr_target(impl["storage"])
    device = _device(storage.dereference()["device_"]) if storage is not None else "no storage"

    layout = "sizes=%s, strides=%s, offset=%d, dtype=%s, device=%s" % (sizes, strides, offset, dtype_name, device)
    meta = _shared_ptr_target(impl["autograd_meta"])
    if meta is not None:
        meta = meta.dereference()
        layout += ", requires_grad=%s" % ("true" if bool(meta["requires_grad"]) else "false")
        grad_fn = _shared_ptr_target(meta["grad_fn"])
        if grad_fn is not None:
            layout += ", grad_fn=" + _grad_fn_name(grad_fn)
        name = _std_string(meta["name"])
        if name:
            layout += ", name=" + name
    else:
        layout += ", requires_grad=false"

    if storage is None or device != "cpu" or element_type is None:
        values = "<not read>"
    else:
        values = _elements(impl, dtype_name, element_type, sizes, strides, offset, limit)
    return "ember::Tensor(%s) {%s}" % (values, layout)


class TensorPrinter:
    def __init__(self, value):
        self.value = value

    def to_string(self):
        try:
            return format_tensor(self.value, _limit[0])
        except (gdb.error, gdb.MemoryError) as error:  # e.g. an object not yet constructed
            return "ember::Tensor(<unreadable: %s>)" % error


class DimVectorPrinter:
    """An ember::DimVector (core/dim_vector.h) as its values, wherever they live (inside the
    object up to 5 dims, on the heap beyond), not as its raw fields."""

    def __init__(self, value):
        self.value = value

    def to_string(self):
        return "ember::DimVector of length %d" % int(self.value["size_"])

    def children(self):
        for index, item in enumerate(_vector(self.value)):
            yield "[%d]" % index, item

    def display_hint(self):
        return "array"


def _tensor_base(type_):
    """The ember::Tensor base of a class derived from it (nn::Parameter), or None."""
    if type_.code != gdb.TYPE_CODE_STRUCT:
        return None
    for field in type_.fields():
        if field.is_base_class:
            base = field.type.strip_typedefs()
            if base.unqualified().tag == "ember::Tensor":
                return base
            found = _tensor_base(base)
            if found is not None:
                return found
    return None


def _lookup(value):
    type_ = value.type.strip_typedefs()
    if type_.code in (gdb.TYPE_CODE_REF, gdb.TYPE_CODE_RVALUE_REF):
        value = value.referenced_value()
        type_ = value.type.strip_typedefs()
    if type_.unqualified().tag == "ember::Tensor":
        return TensorPrinter(value)
    if type_.unqualified().tag == "ember::DimVector":  # also ember::Shape, its alias
        return DimVectorPrinter(value)
    base = _tensor_base(type_.unqualified())
    if base is not None:  # nn::Parameter: print it as the tensor it is
        return TensorPrinter(value.cast(base))
    return None


class EmberTensorCommand(gdb.Command):
    """ember-tensor EXPR: print an ember::Tensor with every element."""

    def __init__(self):
        super().__init__("ember-tensor", gdb.COMMAND_DATA, gdb.COMPLETE_EXPRESSION)

    def invoke(self, argument, from_tty):
        gdb.write(format_tensor(_tensor_argument(argument), 0) + "\n")


class EmberGradCommand(gdb.Command):
    """ember-grad EXPR: the .grad of an ember::Tensor, read from memory (no call)."""

    def __init__(self):
        super().__init__("ember-grad", gdb.COMMAND_DATA, gdb.COMPLETE_EXPRESSION)

    def invoke(self, argument, from_tty):
        impl = _shared_ptr_target(_tensor_argument(argument)["impl_"])
        meta = _shared_ptr_target(impl["autograd_meta"]) if impl is not None else None
        if meta is None:
            gdb.write("(no grad: autograd never touched this tensor)\n")
            return
        gdb.write(format_tensor(meta.dereference()["grad"], _limit[0]) + "\n")


class EmberLimitCommand(gdb.Command):
    """ember-limit N: read at most N elements when printing a tensor (0: all)."""

    def __init__(self):
        super().__init__("ember-limit", gdb.COMMAND_DATA)

    def invoke(self, argument, from_tty):
        _limit[0] = int(argument) if argument.strip() else DEFAULT_LIMIT


def _saved_summary(saved):
    """'name [sizes] dtype' for one autograd SavedTensor ('freed' after backward)."""
    name = _std_string(saved["name_"]) or "?"
    if bool(saved["released_"]):
        return name + " freed"
    impl = _shared_ptr_target(saved["data_"]["impl_"])
    if impl is None:
        return name + " -"
    impl = impl.dereference()
    return "%s %s %s" % (name, _vector(impl["sizes"]), DTYPES.get(int(impl["dtype"]), ("?",))[0])


def format_graph(tensor):
    impl = _shared_ptr_target(tensor["impl_"])
    meta = _shared_ptr_target(impl["autograd_meta"]) if impl is not None else None
    grad_fn = _shared_ptr_target(meta.dereference()["grad_fn"]) if meta is not None else None
    if grad_fn is None:
        return "(no grad_fn: a leaf, or recorded with grad mode off)\n"
    node_type = gdb.lookup_type("ember::autograd::Node").pointer()
    lines = []
    seen = set()

    def walk(node_pointer, depth):
        node = node_pointer.dereference()
        address = int(node_pointer)
        line = "  " * depth + _std_string(node["name_"])
        if address in seen:
            lines.append(line + " (shown above)")
            return
        seen.add(address)
        saved = node["saved_"]
        start = saved["_M_impl"]["_M_start"]
        count = int(saved["_M_impl"]["_M_finish"] - start)
        if count:
            line += "  saved: " + ", ".join(_saved_summary((start + i).dereference()) for i in range(count))
        lines.append(line)
        edges = node["next_edges_"]
        edge_start = edges["_M_impl"]["_M_start"]
        for i in range(int(edges["_M_impl"]["_M_finish"] - edge_start)):
            target = _shared_ptr_target((edge_start + i).dereference()["node"])
            if target is None:
                lines.append("  " * (depth + 1) + "None")
            else:
                walk(target, depth + 1)

    walk(grad_fn.cast(node_type), 0)
    return "\n".join(lines) + "\n"


def _tensor_argument(argument):
    value = gdb.parse_and_eval(argument)
    if value.type.strip_typedefs().code in (gdb.TYPE_CODE_REF, gdb.TYPE_CODE_RVALUE_REF):
        value = value.referenced_value()
    base = _tensor_base(value.type.strip_typedefs().unqualified())
    return value.cast(base) if base is not None else value


class EmberGraphCommand(gdb.Command):
    """ember-graph EXPR: the autograd tape behind an ember::Tensor, as an indented tree."""

    def __init__(self):
        super().__init__("ember-graph", gdb.COMMAND_DATA, gdb.COMPLETE_EXPRESSION)

    def invoke(self, argument, from_tty):
        gdb.write(format_graph(_tensor_argument(argument)))


gdb.pretty_printers.append(_lookup)
EmberGraphCommand()
EmberTensorCommand()
EmberLimitCommand()
EmberGradCommand()
