print("example under construction")
