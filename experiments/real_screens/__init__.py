"""The real-screen corpus: real uiautomator dumps and Appium page sources, labelled."""
