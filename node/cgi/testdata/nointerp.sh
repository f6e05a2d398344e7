#!/nonexistent/interpreter
print("never")
